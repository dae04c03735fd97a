/// The six wire types of the protobuf binary encoding: the low three bits of a field's tag.
///
/// A reader needs the wire type to know how many bytes a field occupies, so it can skip
/// fields it does not understand. Groups (`startGroup`/`endGroup`) are deprecated proto2
/// features; the reader skips them but offers no API to decode them.
package enum ProtobufWireType: UInt8, Sendable, CustomStringConvertible {
    /// A base-128 varint: `int32`, `int64`, `uint32`, `uint64`, `sint32`, `sint64`, `bool`, enums.
    case varint = 0
    /// Eight little-endian bytes: `fixed64`, `sfixed64`, `double`.
    case fixed64 = 1
    /// A varint length followed by that many bytes: strings, bytes, messages, packed repeated fields.
    case lengthDelimited = 2
    /// The start of a proto2 group.
    case startGroup = 3
    /// The end of a proto2 group.
    case endGroup = 4
    /// Four little-endian bytes: `fixed32`, `sfixed32`, `float`.
    case fixed32 = 5

    /// The wire type's name as the protobuf documentation spells it (`VARINT`, `LEN`, …).
    package var description: String {
        switch self {
        case .varint: "VARINT"
        case .fixed64: "I64"
        case .lengthDelimited: "LEN"
        case .startGroup: "SGROUP"
        case .endGroup: "EGROUP"
        case .fixed32: "I32"
        }
    }
}

/// A field's tag: its number in the message schema and how its value is encoded.
package struct ProtobufTag: Sendable, Hashable, CustomStringConvertible {
    /// The field number from the `.proto` schema, in `1...536_870_911`.
    package var fieldNumber: Int
    /// How the field's value is encoded.
    package var wireType: ProtobufWireType

    /// Creates a tag from a field number and wire type.
    package init(fieldNumber: Int, wireType: ProtobufWireType) {
        self.fieldNumber = fieldNumber
        self.wireType = wireType
    }

    /// `field 3 (LEN)`, the form used in error messages.
    package var description: String { "field \(fieldNumber) (\(wireType))" }
}
