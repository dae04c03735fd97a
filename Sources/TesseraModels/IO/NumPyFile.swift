import Foundation
import TesseraMultiArray
import TesseraTensor

/// Why an `.npy` file cannot be read: what was wrong, with the file's name.
package struct NumPyFileError: Error, Sendable, CustomStringConvertible {
    /// The message.
    package let description: String
}

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
    package static func read(_ url: URL) throws -> MLMultiArray {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw NumPyFileError(description: "\(url.path): cannot read the file (\(error.localizedDescription))")
        }
        return try decode(data, name: url.lastPathComponent)
    }

    /// Parses the contents of an `.npy` file; `name` appears in error messages.
    package static func decode(_ data: Data, name: String = "<data>") throws -> MLMultiArray {
        let bytes = [UInt8](data)
        func fail(_ message: String) -> NumPyFileError { NumPyFileError(description: "\(name): \(message)") }
        guard bytes.count >= 10, bytes[0..<6].elementsEqual([0x93, 0x4E, 0x55, 0x4D, 0x50, 0x59]) else {
            throw fail("not an .npy file (bad magic)")
        }
        let headerStart: Int
        let headerLength: Int
        switch bytes[6] {
        case 1:
            headerStart = 10
            headerLength = Int(bytes[8]) | Int(bytes[9]) << 8
        case 2, 3:
            guard bytes.count >= 12 else { throw fail("truncated header") }
            headerStart = 12
            headerLength = Int(bytes[8]) | Int(bytes[9]) << 8 | Int(bytes[10]) << 16 | Int(bytes[11]) << 24
        default:
            throw fail("unsupported .npy version \(bytes[6])")
        }
        guard bytes.count >= headerStart + headerLength else { throw fail("the header runs past the end of the file") }
        let header = String(decoding: bytes[headerStart..<(headerStart + headerLength)], as: UTF8.self)
        let descr = try field("descr", header, fail).trimmingCharacters(in: CharacterSet(charactersIn: "'\" "))
        guard try field("fortran_order", header, fail).trimmingCharacters(in: .whitespaces) == "False" else {
            throw fail("Fortran-order arrays are not supported; save with np.ascontiguousarray")
        }
        let shapeText = try field("shape", header, fail)
        let shape = try shapeText.trimmingCharacters(in: CharacterSet(charactersIn: "() ")).split(separator: ",")
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            .map { part -> Int in
                guard let size = Int(part), size >= 0 else { throw fail("bad shape \(shapeText)") }
                return size
            }
        let sizes: [String: Int] = ["<f4": 4, "<f8": 8, "<f2": 2, "<i4": 4, "|i1": 1, "<i8": 8, "|u1": 1, "|b1": 1]
        guard let size = sizes[descr] else {
            throw fail("unsupported dtype \(descr) (supported: \(sizes.keys.sorted().joined(separator: ", ")))")
        }
        var count = 1
        for dimension in shape {
            let (product, overflow) = count.multipliedReportingOverflow(by: dimension)
            guard !overflow else { throw fail("shape \(shape) is too large") }
            count = product
        }
        let start = headerStart + headerLength
        guard bytes.count - start >= count * size else {
            throw fail("the data is \(bytes.count - start) bytes, but shape \(shape) of \(descr) needs \(count * size)")
        }
        let payload = bytes[start..<(start + count * size)]
        let arrayShape = shape.isEmpty ? [1] : shape
        func load<T>(_: T.Type) -> [T] {
            payload.withUnsafeBytes { raw in
                (0..<count).map { raw.loadUnaligned(fromByteOffset: $0 * size, as: T.self) }
            }
        }
        switch descr {
        case "<f4": return MLMultiArray(MLShapedArray<Float>(scalars: load(Float.self), shape: arrayShape))
        case "<f8": return MLMultiArray(MLShapedArray<Double>(scalars: load(Double.self), shape: arrayShape))
        case "<f2": return MLMultiArray(MLShapedArray<Float16>(scalars: load(Float16.self), shape: arrayShape))
        case "<i4": return MLMultiArray(MLShapedArray<Int32>(scalars: load(Int32.self), shape: arrayShape))
        case "|i1": return MLMultiArray(MLShapedArray<Int8>(scalars: load(Int8.self), shape: arrayShape))
        case "<i8":
            let values = try load(Int64.self).map { value -> Int32 in
                guard let narrowed = Int32(exactly: value) else {
                    throw fail("int64 value \(value) does not fit int32")
                }
                return narrowed
            }
            return MLMultiArray(MLShapedArray<Int32>(scalars: values, shape: arrayShape))
        default:
            return MLMultiArray(MLShapedArray<Int32>(scalars: load(UInt8.self).map(Int32.init), shape: arrayShape))
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
        let shape = array.shape.map(\.intValue)
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

    private static func field(_ key: String, _ header: String, _ fail: (String) -> NumPyFileError) throws -> String {
        guard let keyRange = header.range(of: "'\(key)':") else { throw fail("the header has no '\(key)'") }
        let rest = header[keyRange.upperBound...]
        if key == "shape" {
            guard let open = rest.firstIndex(of: "("), let close = rest.firstIndex(of: ")") else {
                throw fail("the header's shape is malformed")
            }
            return String(rest[open...close])
        }
        let end = rest.firstIndex(of: ",") ?? rest.endIndex
        return String(rest[..<end])
    }
}
