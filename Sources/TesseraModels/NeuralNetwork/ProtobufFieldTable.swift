import TesseraProtobuf

/// A protobuf message decoded into its fields by number, without a schema: how the
/// NeuralNetwork layers' parameter messages (`ConvolutionLayerParams`, …, one per layer type)
/// are held until the layer's lowering reads the fields it knows.
///
/// Length-delimited fields keep their bytes; ``message(_:)`` decodes one as a nested table on
/// demand, so a string, a `bytes` blob, a packed list and a sub-message are all read the way
/// the schema says only when asked for. Every reader takes the last occurrence of a singular
/// field, as protobuf specifies, and accepts packed and unpacked repeated scalars.
///
/// ```swift
/// let params = try ProtobufFieldTable(decoding: bytes)
/// let groups = params.uint(10) ?? 1          // ConvolutionLayerParams.nGroups
/// ```
struct ProtobufFieldTable: Sendable, Equatable {
    /// One field occurrence as it was on the wire.
    enum Value: Sendable, Equatable {
        case varint(UInt64)
        case fixed32(UInt32)
        case fixed64(UInt64)
        case bytes([UInt8])
    }

    /// Every field occurrence by field number, in file order.
    private(set) var fields: [Int: [Value]] = [:]

    /// An empty message (every field at its default).
    init() {}

    /// Decodes the fields of a serialized message.
    ///
    /// - Throws: ``ModelFormatError`` `.malformedProtobuf` for a truncated or malformed encoding.
    init(decoding bytes: [UInt8], message: String) throws {
        self = try bytes.withUnsafeBytes { buffer in
            var reader = ProtobufReader(buffer, maxDepth: CoreMLSpec.Model.maxNestingDepth)
            return try decodingMessage(message) { try ProtobufFieldTable(from: &reader) }
        }
    }

    /// Decodes the fields of the message `reader` is positioned over.
    init(from reader: inout ProtobufReader) throws {
        while let tag = try reader.nextField() {
            let value: Value
            switch tag.wireType {
            case .varint: value = .varint(try reader.readUInt64())
            case .fixed32: value = .fixed32(try reader.readFixed32())
            case .fixed64: value = .fixed64(try reader.readFixed64())
            case .lengthDelimited: value = .bytes(try reader.readBytes())
            case .startGroup, .endGroup:
                try reader.skipField()
                continue
            }
            fields[tag.fieldNumber, default: []].append(value)
        }
    }

    /// Whether field `number` occurs at all (a oneof alternative set to an empty message does).
    func has(_ number: Int) -> Bool { fields[number] != nil }

    /// The last varint of field `number`, `nil` when absent.
    func uint(_ number: Int) -> UInt64? {
        for value in (fields[number] ?? []).reversed() { if case .varint(let v) = value { return v } }
        return nil
    }

    /// Field `number` as a size or count (a `uint32`/`uint64` field: channels, kernel sizes,
    /// vocabulary sizes, bit widths), `nil` when absent. A value of 2³¹ or more, which no size of
    /// a model Tessera runs reaches, is clamped to 2³¹ − 1 (`Int32.max`) so that converting it
    /// never traps and products of two sizes never overflow; the layer's checks of weight counts
    /// and shapes then refuse it.
    func size(_ number: Int) -> Int? { uint(number).map { Int(Swift.min($0, UInt64(Int32.max))) } }

    /// Field `number` as a signed `int64`/`int32`/enum (two's complement), `nil` when absent,
    /// clamped to ±(2³¹ − 1) (``LoweredFunction/clampedParameter(_:)``; a seed, which is not a
    /// size, reads ``int64(_:)``).
    func int(_ number: Int) -> Int? { int64(number).map { LoweredFunction.clampedParameter(Int($0)) } }

    /// Field `number` as a signed `int64` as written (two's complement), `nil` when absent.
    func int64(_ number: Int) -> Int64? { uint(number).map { Int64(bitPattern: $0) } }

    /// Field `number` as a `bool` (`false` when absent).
    func bool(_ number: Int) -> Bool { (uint(number) ?? 0) != 0 }

    /// Field `number` as a `float`, `nil` when absent.
    func float(_ number: Int) -> Float? {
        for value in (fields[number] ?? []).reversed() {
            if case .fixed32(let bits) = value { return Float(bitPattern: bits) }
        }
        return nil
    }

    /// Field `number` as a `double`, `nil` when absent.
    func double(_ number: Int) -> Double? {
        for value in (fields[number] ?? []).reversed() {
            if case .fixed64(let bits) = value { return Double(bitPattern: bits) }
        }
        return nil
    }

    /// The bytes of the last length-delimited occurrence of field `number`.
    func bytes(_ number: Int) -> [UInt8]? {
        for value in (fields[number] ?? []).reversed() { if case .bytes(let b) = value { return b } }
        return nil
    }

    /// Field `number` as a `string` (`""` when absent; invalid UTF-8 is repaired).
    func string(_ number: Int) -> String { bytes(number).map { String(decoding: $0, as: UTF8.self) } ?? "" }

    /// Every occurrence of a repeated `string` field.
    func strings(_ number: Int) -> [String] {
        (fields[number] ?? []).compactMap {
            if case .bytes(let b) = $0 { String(decoding: b, as: UTF8.self) } else { nil }
        }
    }

    /// A repeated varint field (`uint64`, `int64`, enums), packed or not, as signed integers
    /// clamped to ±(2³¹ − 1) (``LoweredFunction/clampedParameter(_:)``).
    func ints(_ number: Int) throws -> [Int] {
        var result: [Int] = []
        for value in fields[number] ?? [] {
            switch value {
            case .varint(let v): result.append(LoweredFunction.clampedParameter(Int(Int64(bitPattern: v))))
            case .bytes(let packed):
                var index = 0
                while index < packed.count {
                    var raw: UInt64 = 0
                    var shift: UInt64 = 0
                    while true {
                        guard index < packed.count, shift < 64 else {
                            throw ModelFormatError(.malformedProtobuf, "a packed varint field is truncated")
                        }
                        let byte = packed[index]
                        index += 1
                        raw |= UInt64(byte & 0x7F) << shift
                        if byte & 0x80 == 0 { break }
                        shift += 7
                    }
                    result.append(LoweredFunction.clampedParameter(Int(Int64(bitPattern: raw))))
                }
            default: break
            }
        }
        return result
    }

    /// A repeated `float` field, packed or not.
    func floats(_ number: Int) throws -> [Float] {
        var result: [Float] = []
        for value in fields[number] ?? [] {
            switch value {
            case .fixed32(let bits): result.append(Float(bitPattern: bits))
            case .bytes(let packed):
                guard packed.count % 4 == 0 else {
                    throw ModelFormatError(
                        .malformedProtobuf, "a packed float field has \(packed.count) bytes, not a multiple of 4")
                }
                result.reserveCapacity(result.count + packed.count / 4)
                packed.withUnsafeBytes { buffer in
                    for index in 0..<(packed.count / 4) {
                        result.append(
                            Float(
                                bitPattern: UInt32(
                                    littleEndian: buffer.loadUnaligned(fromByteOffset: 4 * index, as: UInt32.self))))
                    }
                }
            default: break
            }
        }
        return result
    }

    /// Field `number` decoded as a nested message, `nil` when absent.
    ///
    /// - Throws: ``ModelFormatError`` when its bytes are not a valid message.
    func message(_ number: Int, _ name: String) throws -> ProtobufFieldTable? {
        guard let bytes = bytes(number) else { return nil }
        return try ProtobufFieldTable(decoding: bytes, message: name)
    }

    /// Every occurrence of a repeated message field, decoded.
    func messages(_ number: Int, _ name: String) throws -> [ProtobufFieldTable] {
        try (fields[number] ?? []).compactMap { value in
            guard case .bytes(let bytes) = value else { return nil }
            return try ProtobufFieldTable(decoding: bytes, message: name)
        }
    }
}
