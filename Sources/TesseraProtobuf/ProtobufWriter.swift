/// A minimal protobuf wire-format writer: tags, varints, fixed-width values and
/// length-delimited fields appended to a byte array.
///
/// Tessera uses it to build test inputs and small files it writes itself; it is the mirror
/// of ``ProtobufReader`` and, like it, knows no schema.
///
/// ```swift
/// var writer = ProtobufWriter()
/// writer.writeInt64(6, field: 1)
/// writer.writeMessage(field: 2) { $0.writeString("x", field: 1) }
/// let bytes = writer.bytes
/// ```
package struct ProtobufWriter: Sendable {
    /// The encoded bytes so far.
    package private(set) var bytes: [UInt8] = []

    /// Creates an empty writer.
    package init() {}

    /// Appends a tag.
    package mutating func writeTag(field: Int, wireType: ProtobufWireType) {
        writeRawVarint(UInt64(field) << 3 | UInt64(wireType.rawValue))
    }

    /// Appends a base-128 varint without a tag.
    package mutating func writeRawVarint(_ value: UInt64) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }

    /// Appends raw bytes, e.g. a deliberately malformed fragment in a test.
    package mutating func writeRaw(_ raw: [UInt8]) {
        bytes.append(contentsOf: raw)
    }

    /// Appends an unsigned varint field (`uint32`, `uint64`).
    package mutating func writeUInt64(_ value: UInt64, field: Int) {
        writeTag(field: field, wireType: .varint)
        writeRawVarint(value)
    }

    /// Appends a signed varint field (`int32`, `int64`, enums); negatives take ten bytes.
    package mutating func writeInt64(_ value: Int64, field: Int) {
        writeUInt64(UInt64(bitPattern: value), field: field)
    }

    /// Appends a zigzag-encoded `sint32`/`sint64` field.
    package mutating func writeSInt64(_ value: Int64, field: Int) {
        writeUInt64(UInt64(bitPattern: (value << 1) ^ (value >> 63)), field: field)
    }

    /// Appends a `bool` field.
    package mutating func writeBool(_ value: Bool, field: Int) {
        writeUInt64(value ? 1 : 0, field: field)
    }

    /// Appends a `fixed32` field.
    package mutating func writeFixed32(_ value: UInt32, field: Int) {
        writeTag(field: field, wireType: .fixed32)
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    /// Appends a `fixed64` field.
    package mutating func writeFixed64(_ value: UInt64, field: Int) {
        writeTag(field: field, wireType: .fixed64)
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    /// Appends a `float` field.
    package mutating func writeFloat(_ value: Float, field: Int) {
        writeFixed32(value.bitPattern, field: field)
    }

    /// Appends a `double` field.
    package mutating func writeDouble(_ value: Double, field: Int) {
        writeFixed64(value.bitPattern, field: field)
    }

    /// Appends a `bytes` field.
    package mutating func writeBytes(_ value: [UInt8], field: Int) {
        writeTag(field: field, wireType: .lengthDelimited)
        writeRawVarint(UInt64(value.count))
        bytes.append(contentsOf: value)
    }

    /// Appends a `string` field as UTF-8.
    package mutating func writeString(_ value: String, field: Int) {
        writeBytes(Array(value.utf8), field: field)
    }

    /// Appends an embedded message built by `body`.
    package mutating func writeMessage(field: Int, _ body: (inout ProtobufWriter) -> Void) {
        var child = ProtobufWriter()
        body(&child)
        writeBytes(child.bytes, field: field)
    }

    /// Appends a packed repeated varint field.
    package mutating func writePackedVarints(_ values: [UInt64], field: Int) {
        var child = ProtobufWriter()
        for value in values { child.writeRawVarint(value) }
        writeBytes(child.bytes, field: field)
    }

    /// Appends a packed repeated `float` field.
    package mutating func writePackedFloats(_ values: [Float], field: Int) {
        var raw: [UInt8] = []
        raw.reserveCapacity(values.count * 4)
        for value in values { withUnsafeBytes(of: value.bitPattern.littleEndian) { raw.append(contentsOf: $0) } }
        writeBytes(raw, field: field)
    }

    /// Appends a packed repeated `double` field.
    package mutating func writePackedDoubles(_ values: [Double], field: Int) {
        var raw: [UInt8] = []
        raw.reserveCapacity(values.count * 8)
        for value in values { withUnsafeBytes(of: value.bitPattern.littleEndian) { raw.append(contentsOf: $0) } }
        writeBytes(raw, field: field)
    }
}
