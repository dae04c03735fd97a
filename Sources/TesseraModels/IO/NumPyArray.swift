import Foundation
import TesseraKernels

/// Why an `.npy` file cannot be read: what was wrong, with the file's name.
package struct NumPyFileError: Error, Sendable, CustomStringConvertible {
    /// The message, starting with the file's name.
    package let description: String
}

/// The parsed contents of a NumPy `.npy` file (format versions 1–3, C order): its dtype, shape
/// and raw little-endian element bytes.
///
/// Supported dtypes: `<f4`, `<f8`, `<f2`, `<i8`, `<i4`, `|i1`, `|u1`, `|b1`. A malformed file
/// (bad magic, truncated header or data, Fortran order, an unknown dtype, a shape that is not a
/// tuple of non-negative integers or overflows) throws ``NumPyFileError``. ``NumPyFile`` turns
/// an array into an `MLMultiArray`; tests read fixtures through it.
///
/// ```swift
/// let expected = try NumPyArray(contentsOf: URL(fileURLWithPath: "gemm_plain_out.npy"))
/// expected.shape    // [5, 3]
/// expected.floats   // 15 values
/// ```
package struct NumPyArray: Sendable {
    /// The element type, as NumPy spells it (`<f4`, `|b1`, …).
    package var dtype: String
    /// The array's shape (empty for a 0-d array).
    package var shape: [Int]
    /// The raw element bytes, row-major, `count * elementSize` of them.
    package var bytes: [UInt8]
    /// The file's name, as error messages give it.
    package var name: String

    /// Bytes per element of every supported dtype.
    package static let elementSizes: [String: Int] = [
        "<f4": 4, "<f8": 8, "<f2": 2, "<i8": 8, "<i4": 4, "|i1": 1, "|u1": 1, "|b1": 1,
    ]

    /// The number of elements (1 for a 0-d array).
    package var count: Int { shape.reduce(1, *) }

    /// Bytes per element.
    package var elementSize: Int { NumPyArray.elementSizes[dtype]! }

    /// Reads and parses the file at `url`.
    package init(contentsOf url: URL) throws(NumPyFileError) {
        let data: Data
        do {
            data = try Data(readingFile: url)
        } catch {
            throw NumPyFileError(description: "\(url.path): cannot read the file (\(error.localizedDescription))")
        }
        try self.init(data: data, name: url.lastPathComponent)
    }

    /// Parses the contents of an `.npy` file; `name` appears in error messages.
    package init(data: Data, name: String = "<data>") throws(NumPyFileError) {
        let raw = [UInt8](data)
        func fail(_ message: String) -> NumPyFileError { NumPyFileError(description: "\(name): \(message)") }
        guard raw.count >= 10, raw[0..<6].elementsEqual([0x93, 0x4E, 0x55, 0x4D, 0x50, 0x59]) else {
            throw fail("not an .npy file (bad magic)")
        }
        let headerStart: Int
        let headerLength: Int
        switch raw[6] {
        case 1:
            headerStart = 10
            headerLength = Int(raw[8]) | Int(raw[9]) << 8
        case 2, 3:
            guard raw.count >= 12 else { throw fail("truncated header") }
            headerStart = 12
            headerLength = Int(raw[8]) | Int(raw[9]) << 8 | Int(raw[10]) << 16 | Int(raw[11]) << 24
        default:
            throw fail("unsupported .npy version \(raw[6])")
        }
        guard raw.count >= headerStart + headerLength else { throw fail("the header runs past the end of the file") }
        let header = String(decoding: raw[headerStart..<(headerStart + headerLength)], as: UTF8.self)
        let descr = try Self.field("descr", header, fail).trimmingCharacters(in: CharacterSet(charactersIn: "'\" "))
        guard try Self.field("fortran_order", header, fail).trimmingCharacters(in: .whitespaces) == "False" else {
            throw fail("Fortran-order arrays are not supported; save with np.ascontiguousarray")
        }
        let shapeText = try Self.field("shape", header, fail)
        var shape: [Int] = []
        for part in shapeText.trimmingCharacters(in: CharacterSet(charactersIn: "() ")).split(separator: ",") {
            let text = part.trimmingCharacters(in: .whitespaces)
            if text.isEmpty { continue }
            guard let size = Int(text), size >= 0 else { throw fail("bad shape \(shapeText)") }
            shape.append(size)
        }
        guard let size = Self.elementSizes[descr] else {
            let supported = Self.elementSizes.keys.sorted().joined(separator: ", ")
            throw fail("unsupported dtype \(descr) (supported: \(supported))")
        }
        guard let needed = (shape + [size]).checkedElementCount else { throw fail("shape \(shape) is too large") }
        let start = headerStart + headerLength
        guard raw.count - start >= needed else {
            throw fail("the data is \(raw.count - start) bytes, but shape \(shape) of \(descr) needs \(needed)")
        }
        self.dtype = descr
        self.shape = shape
        self.bytes = Array(raw[start..<(start + needed)])
        self.name = name
    }

    /// The value text of `key` in a header like
    /// `{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }`.
    private static func field(
        _ key: String, _ header: String, _ fail: (String) -> NumPyFileError
    ) throws(NumPyFileError) -> String {
        guard let keyRange = header.range(of: "'\(key)':") else { throw fail("the header has no '\(key)'") }
        let rest = header[keyRange.upperBound...].drop { $0 == " " }
        if key == "shape" {
            guard rest.first == "(", let close = rest.firstIndex(of: ")") else {
                throw fail("the header's shape is malformed")
            }
            return String(rest[...close])
        }
        let end = rest.firstIndex(of: ",") ?? rest.firstIndex(of: "}") ?? rest.endIndex
        return String(rest[..<end])
    }

    /// The elements as `T`, which must be the dtype's own type (`Float` for `<f4`, `UInt8` for
    /// `|u1` and `|b1`, …).
    package func elements<T>(as _: T.Type) -> [T] {
        let size = MemoryLayout<T>.size
        precondition(size == elementSize, "[NumPyArray] \(T.self) does not match dtype \(dtype)")
        return bytes.withUnsafeBytes { raw in
            (0..<count).map { raw.loadUnaligned(fromByteOffset: $0 * size, as: T.self) }
        }
    }

    /// Every element as `Double` (exact for every dtype but `<i8` values beyond 2^53).
    package var doubles: [Double] {
        switch dtype {
        case "<f4": elements(as: Float.self).map(Double.init)
        case "<f8": elements(as: Double.self)
        case "<f2": elements(as: Float16.self).map(Double.init)
        case "<i8": elements(as: Int64.self).map(Double.init)
        case "<i4": elements(as: Int32.self).map(Double.init)
        case "|i1": elements(as: Int8.self).map(Double.init)
        default: elements(as: UInt8.self).map(Double.init)  // |u1, |b1
        }
    }

    /// Every element as `Float` (rounded from `<f8` and large `<i8`).
    package var floats: [Float] { doubles.map { Float($0) } }

    /// Every element as `Int`, floating-point values rounded toward zero.
    ///
    /// Throws ``NumPyFileError`` (naming the file and the element) for a floating-point value
    /// that has no `Int`: NaN, an infinity, or one beyond `Int`'s range. Integer and bool
    /// dtypes always convert.
    ///
    /// ```swift
    /// let parameters = try NumPyArray(contentsOf: url).ints   // <f8 [2.9, -1.5] → [2, -1]
    /// ```
    package var ints: [Int] {
        get throws(NumPyFileError) {
            if dtype == "<i8" { return elements(as: Int64.self).map(Int.init) }
            let values = doubles
            var result = [Int]()
            result.reserveCapacity(values.count)
            for (index, value) in values.enumerated() {
                guard let integer = Int(exactly: value.rounded(.towardZero)) else {
                    throw NumPyFileError(
                        description:
                            "\(name): element \(index) of \(dtype) \(shape) is \(value), which has no Int value")
                }
                result.append(integer)
            }
            return result
        }
    }
}
