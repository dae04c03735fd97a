import Foundation
import TesseraKernels
import TesseraTensor

extension MLMultiArray: CustomStringConvertible, CustomDebugStringConvertible {
    /// A one-line summary and the leading elements in row-major order, e.g.
    /// `Float32 1 × 3 × 2 array [0.5, 1.0, 1.5, 2.0, 2.5, 3.0]`; strides are shown when the
    /// layout is not contiguous, and long arrays end with `…`.
    public var description: String {
        let dims = shapeValues.isEmpty ? "scalar" : shapeValues.map(String.init).joined(separator: " × ")
        var text = "\(dataType.displayName) \(dims) array"
        if !isContiguous { text += " (strides \(strideValues))" }
        let limit = 16
        var values: [String] = []
        let offsets = StridedLayout(shape: shapeValues, strides: strideValues).elementOffsets(limit: limit)
        withExtendedLifetime(storage) {
            for offset in offsets {
                let number = dataType.load(readPointer + offset * dataType.byteCount)
                switch dataType {
                case .double: values.append("\(number.doubleValue)")
                case .float32, .float16: values.append("\(number.floatValue)")
                case .int32, .int8: values.append("\(number.intValue)")
                }
            }
        }
        let more = count > limit ? ", …" : ""
        return text + " [" + values.joined(separator: ", ") + more + "]"
    }

    /// The description, with the memory kind for debugging.
    public var debugDescription: String { "MLMultiArray(\(description), \(storage.ownerKind))" }
}
