import Foundation

/// Why an `.npy` file could not be read.
public struct NPYError: Error, CustomStringConvertible {
    /// What was wrong, with the file's name.
    public var description: String
}

/// An array read from a NumPy `.npy` file (format versions 1–3, C order).
///
/// Supported dtypes: `<f4`, `<f8`, `<f2`, `<i4`, `|i1`, `|u1`, `|b1`. Values are kept as
/// raw little-endian bytes and converted on access.
///
/// ```swift
/// let expected = try NPYArray(contentsOf: Fixtures.url("kernels/gemm_plain_out.npy"))
/// expected.shape    // [5, 3]
/// expected.floats   // 15 values
/// ```
public struct NPYArray: Sendable {
    /// The element type, as NumPy spells it (`<f4`, `|b1`, …).
    public var dtype: String
    /// The array's shape (empty for a 0-d array).
    public var shape: [Int]
    /// The raw element bytes, row-major.
    public var bytes: [UInt8]

    /// The number of elements.
    public var count: Int { shape.reduce(1, *) }

    /// Reads and parses the file at `url`.
    public init(contentsOf url: URL) throws {
        try self.init(data: Data(contentsOf: url), name: url.lastPathComponent)
    }

    /// Parses the contents of an `.npy` file; `name` appears in error messages.
    public init(data: Data, name: String = "<data>") throws {
        let raw = [UInt8](data)
        let magic: [UInt8] = [0x93, 0x4E, 0x55, 0x4D, 0x50, 0x59]
        guard raw.count >= 10, Array(raw[0..<6]) == magic else {
            throw NPYError(description: "\(name): not an .npy file (bad magic)")
        }
        let major = raw[6]
        let headerLength: Int
        let headerStart: Int
        switch major {
        case 1:
            headerLength = Int(raw[8]) | Int(raw[9]) << 8
            headerStart = 10
        case 2, 3:
            guard raw.count >= 12 else { throw NPYError(description: "\(name): truncated header") }
            headerLength = Int(raw[8]) | Int(raw[9]) << 8 | Int(raw[10]) << 16 | Int(raw[11]) << 24
            headerStart = 12
        default:
            throw NPYError(description: "\(name): unsupported .npy version \(major)")
        }
        guard raw.count >= headerStart + headerLength else {
            throw NPYError(description: "\(name): header runs past the end of the file")
        }
        let header = String(decoding: raw[headerStart..<(headerStart + headerLength)], as: UTF8.self)
        dtype = try NPYArray.field("descr", in: header, name: name)
            .trimmingCharacters(in: CharacterSet(charactersIn: "'\" "))
        let fortran = try NPYArray.field("fortran_order", in: header, name: name)
        guard fortran.trimmingCharacters(in: .whitespaces) == "False" else {
            throw NPYError(description: "\(name): Fortran-order arrays are not supported")
        }
        let shapeText = try NPYArray.field("shape", in: header, name: name)
        shape = try shapeText.trimmingCharacters(in: CharacterSet(charactersIn: "() "))
            .split(separator: ",")
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }
            .map { part in
                guard let value = Int(part) else { throw NPYError(description: "\(name): bad shape \(shapeText)") }
                return value
            }
        guard let size = NPYArray.elementSize[dtype] else {
            throw NPYError(description: "\(name): unsupported dtype \(dtype)")
        }
        let start = headerStart + headerLength
        let needed = shape.reduce(1, *) * size
        guard raw.count - start >= needed else {
            throw NPYError(description: "\(name): \(raw.count - start) data bytes, \(needed) expected for \(shape)")
        }
        bytes = Array(raw[start..<(start + needed)])
    }

    static let elementSize: [String: Int] = ["<f4": 4, "<f8": 8, "<f2": 2, "<i4": 4, "|i1": 1, "|u1": 1, "|b1": 1]

    /// The value text of `key` in a header like `{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }`.
    private static func field(_ key: String, in header: String, name: String) throws -> String {
        guard let keyRange = header.range(of: "'\(key)':") else {
            throw NPYError(description: "\(name): header has no '\(key)'")
        }
        let rest = header[keyRange.upperBound...].drop { $0 == " " }
        if rest.first == "(" {
            guard let close = rest.firstIndex(of: ")") else { throw NPYError(description: "\(name): bad '\(key)'") }
            return String(rest[...close])
        }
        let end = rest.firstIndex(of: ",") ?? rest.firstIndex(of: "}") ?? rest.endIndex
        return String(rest[..<end])
    }

    /// Every element as `Double` (exact for every supported dtype).
    public var doubles: [Double] {
        bytes.withUnsafeBytes { raw -> [Double] in
            (0..<count).map { i -> Double in
                switch dtype {
                case "<f4": return Double(Float(bitPattern: raw.loadUnaligned(fromByteOffset: i * 4, as: UInt32.self)))
                case "<f8":
                    return Double(bitPattern: raw.loadUnaligned(fromByteOffset: i * 8, as: UInt64.self))
                case "<f2":
                    return Double(Float16(bitPattern: raw.loadUnaligned(fromByteOffset: i * 2, as: UInt16.self)))
                case "<i4": return Double(raw.loadUnaligned(fromByteOffset: i * 4, as: Int32.self))
                case "|i1": return Double(Int8(bitPattern: raw[i]))
                default: return Double(raw[i])  // |u1, |b1
                }
            }
        }
    }

    /// Every element as `Float` (rounded from `<f8`).
    public var floats: [Float] { doubles.map { Float($0) } }

    /// Every element as `Int` (truncated from floating-point dtypes).
    public var ints: [Int] { doubles.map { Int($0) } }
}

/// Locates checked-in test fixtures without SwiftPM resources.
public enum Fixtures {
    /// The repository root: the nearest directory above this source file holding `Package.swift`.
    public static let repositoryRoot: URL = {
        var directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while directory.path != "/" {
            if FileManager.default.fileExists(atPath: directory.appendingPathComponent("Package.swift").path) {
                return directory
            }
            directory.deleteLastPathComponent()
        }
        preconditionFailure("[Fixtures] no Package.swift above \(#filePath)")
    }()

    /// The URL of `Tests/Fixtures/<name>`, e.g. `Fixtures.url("kernels/gemm_plain_a.npy")`.
    public static func url(_ name: String) -> URL {
        repositoryRoot.appendingPathComponent("Tests/Fixtures").appendingPathComponent(name)
    }

    /// Reads `Tests/Fixtures/<name>` as an `.npy` array.
    public static func npy(_ name: String) throws -> NPYArray {
        try NPYArray(contentsOf: url(name))
    }
}
