import Foundation
import TesseraMultiArray
import TesseraTensor

/// Reads and writes NumPy `.npy` files (format versions 1–3, C order) as multi-arrays, for
/// the `tessera predict` command.
///
/// Reading keeps `<f4`, `<f8`, `<f2`, `<i4` and `|i1` arrays in their type and converts
/// `<i8`, `|u1` and `|b1` to `.int32`; writing uses the multi-array's own type.
///
/// ```swift
/// let input = try NumPyFile.read(URL(fileURLWithPath: "image.npy"))      // MLMultiArray
/// try NumPyFile.encode(output).write(to: URL(fileURLWithPath: "probs.npy"))
/// ```
package enum NumPyFile {
    /// Reads an `.npy` file.
    package static func read(_ url: URL) throws(NumPyFileError) -> MLMultiArray {
        try multiArray(NumPyArray(contentsOf: url), name: url.lastPathComponent)
    }

    /// Parses the contents of an `.npy` file; `name` appears in error messages.
    package static func decode(_ data: Data, name: String = "<data>") throws(NumPyFileError) -> MLMultiArray {
        try multiArray(NumPyArray(data: data, name: name), name: name)
    }

    /// The array as a multi-array: a 0-d array becomes shape `[1]`; `<i8` narrows to `.int32`
    /// (a value outside its range throws) and `|u1`, `|b1` widen to it.
    private static func multiArray(_ array: NumPyArray, name: String) throws(NumPyFileError) -> MLMultiArray {
        let shape = array.shape.isEmpty ? [1] : array.shape
        switch array.dtype {
        case "<f4": return MLMultiArray(MLShapedArray<Float>(scalars: array.elements(as: Float.self), shape: shape))
        case "<f8": return MLMultiArray(MLShapedArray<Double>(scalars: array.elements(as: Double.self), shape: shape))
        case "<f2":
            return MLMultiArray(MLShapedArray<Float16>(scalars: array.elements(as: Float16.self), shape: shape))
        case "<i4": return MLMultiArray(MLShapedArray<Int32>(scalars: array.elements(as: Int32.self), shape: shape))
        case "|i1": return MLMultiArray(MLShapedArray<Int8>(scalars: array.elements(as: Int8.self), shape: shape))
        case "<i8":
            var values: [Int32] = []
            values.reserveCapacity(array.count)
            for value in array.elements(as: Int64.self) {
                guard let narrowed = Int32(exactly: value) else {
                    throw NumPyFileError(description: "\(name): int64 value \(value) does not fit int32")
                }
                values.append(narrowed)
            }
            return MLMultiArray(MLShapedArray<Int32>(scalars: values, shape: shape))
        default:
            let values = array.elements(as: UInt8.self).map(Int32.init)
            return MLMultiArray(MLShapedArray<Int32>(scalars: values, shape: shape))
        }
    }

    /// The `.npy` (version 1) encoding of a multi-array, in its own data type, C order.
    package static func encode(_ array: MLMultiArray) -> Data {
        let descr: String
        let payload: Data
        switch array.dataType {
        case .float32: (descr, payload) = ("<f4", bytes(MLShapedArray<Float>(converting: array).scalars))
        case .double: (descr, payload) = ("<f8", bytes(MLShapedArray<Double>(converting: array).scalars))
        case .float16: (descr, payload) = ("<f2", bytes(MLShapedArray<Float16>(converting: array).scalars))
        case .int32: (descr, payload) = ("<i4", bytes(MLShapedArray<Int32>(converting: array).scalars))
        case .int8: (descr, payload) = ("|i1", bytes(MLShapedArray<Int8>(converting: array).scalars))
        }
        let shape = array.shapeValues
        let shapeText = shape.count == 1 ? "(\(shape[0]),)" : "(" + shape.map(String.init).joined(separator: ", ") + ")"
        var header = "{'descr': '\(descr)', 'fortran_order': False, 'shape': \(shapeText), }"
        // Pad with spaces so the data starts on a 64-byte boundary; the header ends with "\n".
        let unpadded = 10 + header.utf8.count + 1
        header += String(repeating: " ", count: (64 - unpadded % 64) % 64) + "\n"
        var data = Data([0x93, 0x4E, 0x55, 0x4D, 0x50, 0x59, 1, 0])
        let length = UInt16(header.utf8.count)
        data.append(contentsOf: [UInt8(length & 0xFF), UInt8(length >> 8)])
        data.append(contentsOf: Array(header.utf8))
        data.append(payload)
        return data
    }

    private static func bytes<T>(_ values: [T]) -> Data {
        values.withUnsafeBytes { Data($0) }
    }
}
