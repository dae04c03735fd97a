// The umbrella module: `import Tessera` brings in Foundation and every public Tessera module,
// the way `import CoreML` does on Apple platforms.
@_exported import Foundation
@_exported import TesseraGraph
@_exported import TesseraKernels
@_exported import TesseraModels
@_exported import TesseraMultiArray
@_exported import TesseraTensor
