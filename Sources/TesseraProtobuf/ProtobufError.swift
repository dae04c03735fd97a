/// A protobuf payload that cannot be decoded: what was wrong and where.
///
/// `offset` is the byte offset from the start of the outermost buffer the reader was
/// created over, so a message names the same position a hex dump of the file shows.
///
/// ```swift
/// do { try decode(data) } catch let error as ProtobufError {
///     print(error)   // "truncated varint at byte 17 (field 2 (VARINT))"
/// }
/// ```
package struct ProtobufError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The kinds of malformed input the reader detects.
    package enum Kind: Sendable, Equatable {
        /// The input ends inside a tag, a varint, a fixed-width value or a length-delimited payload.
        case truncated
        /// A varint is longer than ten bytes or overflows 64 bits.
        case malformedVarint
        /// A tag has wire type 6 or 7, or an end-group tag that matches no start-group.
        case invalidWireType
        /// A tag has field number 0 or one above 536,870,911.
        case invalidFieldNumber
        /// A field's wire type is not the one its schema type needs.
        case wireTypeMismatch
        /// Messages (or groups) nest more deeply than the reader's limit.
        case nestingTooDeep
        /// A `string` field is not valid UTF-8.
        case invalidUTF8
        /// A value does not fit the type it is read as (for example a 64-bit length on a 32-bit count).
        case valueOutOfRange
    }

    /// What was wrong.
    package var kind: Kind
    /// The byte offset, from the start of the outermost buffer, where the problem was found.
    package var offset: Int
    /// The tag of the field being read, when there is one.
    package var tag: ProtobufTag?
    /// A sentence describing the problem.
    package var message: String

    /// Creates an error.
    package init(_ kind: Kind, offset: Int, tag: ProtobufTag? = nil, _ message: String) {
        self.kind = kind
        self.offset = offset
        self.tag = tag
        self.message = message
    }

    /// The message, the byte offset and the field, e.g. `truncated varint at byte 17 (field 2 (VARINT))`.
    package var description: String {
        if let tag {
            return "\(message) at byte \(offset) (\(tag))"
        }
        return "\(message) at byte \(offset)"
    }
}
