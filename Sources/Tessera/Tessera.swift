// The umbrella module: `import Tessera` brings in Foundation and Tessera's API modules, the way
// `import CoreML` does on Apple platforms. The machinery below them (TesseraGraph,
// TesseraKernels, TesseraProtobuf) is `package`: it is not part of the API and is not re-exported.
@_exported import Foundation
@_exported import TesseraCoreVideo
@_exported import TesseraModels
@_exported import TesseraMultiArray
@_exported import TesseraTensor
