/// A forward-only reader of protobuf binary wire format over borrowed bytes.
///
/// The reader does no code generation and knows no schema: the caller loops over the
/// fields with ``nextField()``, switches on the field number, reads each value it knows with
/// a typed read that checks the wire type, and calls ``skipField()`` for the rest. Every
/// read is bounds-checked; malformed input throws ``ProtobufError`` with the byte offset and
/// the field. Nothing is allocated except the values a caller asks for (`String`, arrays).
///
/// ```swift
/// let name = try bytes.withUnsafeBytes { buffer in
///     var reader = ProtobufReader(buffer)
///     var name = ""
///     while let tag = try reader.nextField() {
///         switch tag.fieldNumber {
///         case 1: name = try reader.readString()
///         default: try reader.skipField()
///         }
///     }
///     return name
/// }
/// ```
///
/// The reader borrows the buffer: use it, and the child readers ``readMessage()`` returns,
/// only while the buffer is alive (inside the `withUnsafeBytes` closure that produced it).
package struct ProtobufReader {
    /// The nesting limit used when none is given: deeper messages throw `nestingTooDeep`.
    package static let defaultMaxDepth = 100

    /// The outermost buffer; child readers share it and read a sub-range.
    @usableFromInline let buffer: UnsafeRawBufferPointer
    /// The index of the next unread byte in `buffer`.
    @usableFromInline var position: Int
    /// One past the last byte of this reader's message.
    @usableFromInline let end: Int
    /// How many messages enclose this one (0 for the outermost reader).
    package let depth: Int
    /// The deepest nesting ``readMessage()`` and group skipping accept.
    package let maxDepth: Int
    /// The tag returned by the last ``nextField()``; typed reads check its wire type.
    @inlinable package var tag: ProtobufTag? { currentTag }
    @usableFromInline var currentTag: ProtobufTag?

    /// Creates a reader over a whole buffer.
    ///
    /// - Parameters:
    ///   - buffer: The encoded message. It must stay alive while the reader is used.
    ///   - maxDepth: The deepest nesting of messages accepted; protects callers that decode
    ///     recursively from a stack overflow on hostile input.
    package init(_ buffer: UnsafeRawBufferPointer, maxDepth: Int = ProtobufReader.defaultMaxDepth) {
        self.buffer = buffer
        self.position = 0
        self.end = buffer.count
        self.depth = 0
        self.maxDepth = maxDepth
        self.currentTag = nil
    }

    @usableFromInline
    init(buffer: UnsafeRawBufferPointer, start: Int, end: Int, depth: Int, maxDepth: Int) {
        self.buffer = buffer
        self.position = start
        self.end = end
        self.depth = depth
        self.maxDepth = maxDepth
        self.currentTag = nil
    }

    /// The byte offset of the next unread byte, from the start of the outermost buffer.
    @inlinable package var offset: Int { position }

    /// Whether every byte of this message has been read.
    @inlinable package var isAtEnd: Bool { position >= end }

    /// The number of unread bytes in this message.
    @inlinable package var remainingCount: Int { end - position }

    // MARK: Tags

    /// Reads the next field's tag, or returns `nil` at the end of the message.
    ///
    /// - Throws: ``ProtobufError`` for a truncated tag, wire type 6 or 7, an unmatched
    ///   end-group tag, or field number 0 or above 2^29 − 1.
    @inlinable
    package mutating func nextField() throws -> ProtobufTag? {
        guard position < end else {
            currentTag = nil
            return nil
        }
        let start = position
        let key = try readRawVarint()
        let number = key >> 3
        guard let wireType = ProtobufWireType(rawValue: UInt8(truncatingIfNeeded: key & 7)),
            wireType.rawValue != ProtobufWireType.endGroup.rawValue, number >= 1, number <= 536_870_911
        else {
            throw invalidTagError(key, at: start)
        }
        let tag = ProtobufTag(fieldNumber: Int(number), wireType: wireType)
        currentTag = tag
        return tag
    }

    /// The error for a tag ``nextField()`` rejects; out of line to keep the hot path small.
    @usableFromInline @inline(never)
    func invalidTagError(_ key: UInt64, at start: Int) -> ProtobufError {
        let number = key >> 3
        guard let wireType = ProtobufWireType(rawValue: UInt8(truncatingIfNeeded: key & 7)) else {
            return ProtobufError(.invalidWireType, offset: start, "invalid wire type \(key & 7) in tag")
        }
        guard number >= 1, number <= 536_870_911 else {
            return ProtobufError(.invalidFieldNumber, offset: start, "invalid field number \(number) in tag")
        }
        let tag = ProtobufTag(fieldNumber: Int(number), wireType: wireType)
        return ProtobufError(.invalidWireType, offset: start, tag: tag, "end-group tag without a matching start-group")
    }

    /// Skips the value of the current field, whatever its wire type.
    ///
    /// - Throws: ``ProtobufError`` if the value runs past the end of the message, or a group
    ///   is unterminated or nested deeper than ``maxDepth``.
    package mutating func skipField() throws {
        guard let tag else {
            throw ProtobufError(.wireTypeMismatch, offset: position, "skipField() called before nextField()")
        }
        switch tag.wireType {
        case .varint: _ = try readRawVarint()
        case .fixed64: try advance(by: 8)
        case .fixed32: try advance(by: 4)
        case .lengthDelimited:
            let length = try readLength()
            try advance(by: length)
        case .startGroup: try skipGroup(fieldNumber: tag.fieldNumber)
        case .endGroup:
            throw ProtobufError(
                .invalidWireType, offset: position, tag: tag, "end-group tag without a matching start-group")
        }
    }

    /// Skips a group's fields up to and including the end-group tag that closes it.
    mutating func skipGroup(fieldNumber: Int) throws {
        var open = [fieldNumber]
        while let last = open.last {
            guard depth + open.count <= maxDepth else {
                throw ProtobufError(
                    .nestingTooDeep, offset: position, tag: tag, "groups nest deeper than \(maxDepth) levels")
            }
            guard position < end else {
                throw ProtobufError(.truncated, offset: position, tag: tag, "group for field \(last) is not terminated")
            }
            let start = position
            let key = try readRawVarint()
            let number = Int(truncatingIfNeeded: key >> 3)
            guard let wireType = ProtobufWireType(rawValue: UInt8(truncatingIfNeeded: key & 7)) else {
                throw ProtobufError(.invalidWireType, offset: start, "invalid wire type \(key & 7) in tag")
            }
            guard number >= 1, number <= 536_870_911 else {
                throw ProtobufError(.invalidFieldNumber, offset: start, "invalid field number \(key >> 3) in tag")
            }
            switch wireType {
            case .varint: _ = try readRawVarint()
            case .fixed64: try advance(by: 8)
            case .fixed32: try advance(by: 4)
            case .lengthDelimited: try advance(by: try readLength())
            case .startGroup: open.append(number)
            case .endGroup:
                guard number == last else {
                    throw ProtobufError(
                        .invalidWireType, offset: start,
                        "end-group tag for field \(number) closes the group of field \(last)")
                }
                open.removeLast()
            }
        }
    }

    // MARK: Raw reads (no wire-type check)

    /// Reads a base-128 varint of up to ten bytes.
    @inlinable @inline(__always)
    mutating func readRawVarint() throws -> UInt64 {
        // Tags, lengths and most values fit in one byte.
        if _fastPath(position < end) {
            let byte = buffer[position]
            if byte < 0x80 {
                position += 1
                return UInt64(byte)
            }
        }
        return try readRawVarintSlow()
    }

    /// Reads a varint of two or more bytes, or throws for a truncated or overlong one.
    @usableFromInline @inline(never)
    mutating func readRawVarintSlow() throws -> UInt64 {
        let start = position
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard position < end else {
                throw ProtobufError(.truncated, offset: start, tag: tag, "truncated varint")
            }
            let byte = buffer[position]
            position += 1
            if shift == 63, byte > 1 {
                throw ProtobufError(.malformedVarint, offset: start, tag: tag, "varint overflows 64 bits")
            }
            result |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 {
                return result
            }
            shift += 7
        }
    }

    /// Reads a length prefix and checks that that many bytes remain.
    @inlinable
    mutating func readLength() throws -> Int {
        let start = position
        let length = try readRawVarint()
        guard length <= UInt64(end - position) else {
            throw lengthError(length, at: start)
        }
        return Int(length)
    }

    /// The error for a length prefix that runs past the end of the message.
    @usableFromInline @inline(never)
    func lengthError(_ length: UInt64, at start: Int) -> ProtobufError {
        ProtobufError(
            .truncated, offset: start, tag: tag,
            "length \(length) runs past the end of the message (\(end - position) bytes left)")
    }

    /// Moves past `count` bytes, checking they exist.
    @inlinable
    mutating func advance(by count: Int) throws {
        guard count <= end - position else {
            throw advanceError(count)
        }
        position += count
    }

    /// The error for a fixed-size value that runs past the end of the message.
    @usableFromInline @inline(never)
    func advanceError(_ count: Int) -> ProtobufError {
        ProtobufError(
            .truncated, offset: position, tag: tag, "value of \(count) bytes runs past the end of the message")
    }

    /// Reads four little-endian bytes.
    @inlinable
    mutating func readRawFixed32() throws -> UInt32 {
        let start = position
        try advance(by: 4)
        return UInt32(littleEndian: buffer.loadUnaligned(fromByteOffset: start, as: UInt32.self))
    }

    /// Reads eight little-endian bytes.
    @inlinable
    mutating func readRawFixed64() throws -> UInt64 {
        let start = position
        try advance(by: 8)
        return UInt64(littleEndian: buffer.loadUnaligned(fromByteOffset: start, as: UInt64.self))
    }

    /// Throws unless the current field has the given wire type.
    @inlinable @inline(__always)
    func expect(_ wireType: ProtobufWireType, for type: StaticString) throws {
        guard let tag = currentTag, tag.wireType.rawValue == wireType.rawValue else {
            throw wireTypeError(wireType, for: type)
        }
    }

    /// The error for a typed read of a field with another wire type.
    @usableFromInline @inline(never)
    func wireTypeError(_ wireType: ProtobufWireType, for type: StaticString) -> ProtobufError {
        ProtobufError(
            .wireTypeMismatch, offset: position, tag: tag,
            "a \(type) value needs wire type \(wireType), not \(tag.map { "\($0.wireType)" } ?? "none")")
    }

    // MARK: Scalars

    /// Reads the current `VARINT` field as an unsigned 64-bit value (`uint64`).
    @inlinable
    package mutating func readUInt64() throws -> UInt64 {
        try expect(.varint, for: "uint64")
        return try readRawVarint()
    }

    /// Reads the current `VARINT` field as `int64` (two's complement).
    @inlinable
    package mutating func readInt64() throws -> Int64 {
        try expect(.varint, for: "int64")
        return Int64(bitPattern: try readRawVarint())
    }

    /// Reads the current `VARINT` field as `int32` (the low 32 bits, as protobuf specifies).
    @inlinable
    package mutating func readInt32() throws -> Int32 {
        try expect(.varint, for: "int32")
        return Int32(truncatingIfNeeded: try readRawVarint())
    }

    /// Reads the current `VARINT` field as `uint32` (the low 32 bits).
    @inlinable
    package mutating func readUInt32() throws -> UInt32 {
        try expect(.varint, for: "uint32")
        return UInt32(truncatingIfNeeded: try readRawVarint())
    }

    /// Reads the current `VARINT` field as a zigzag-encoded `sint64`.
    @inlinable
    package mutating func readSInt64() throws -> Int64 {
        try expect(.varint, for: "sint64")
        return Self.zigzagDecode(try readRawVarint())
    }

    /// Reads the current `VARINT` field as a zigzag-encoded `sint32`.
    @inlinable
    package mutating func readSInt32() throws -> Int32 {
        try expect(.varint, for: "sint32")
        return Int32(truncatingIfNeeded: Self.zigzagDecode(try readRawVarint()))
    }

    /// Reads the current `VARINT` field as `bool` (any non-zero value is `true`).
    @inlinable
    package mutating func readBool() throws -> Bool {
        try expect(.varint, for: "bool")
        return try readRawVarint() != 0
    }

    /// Reads the current `VARINT` field as an enum's raw value (an `int32`).
    @inlinable
    package mutating func readEnum() throws -> Int32 {
        try expect(.varint, for: "enum")
        return Int32(truncatingIfNeeded: try readRawVarint())
    }

    /// Reads the current `I32` field as `fixed32`.
    @inlinable
    package mutating func readFixed32() throws -> UInt32 {
        try expect(.fixed32, for: "fixed32")
        return try readRawFixed32()
    }

    /// Reads the current `I64` field as `fixed64`.
    @inlinable
    package mutating func readFixed64() throws -> UInt64 {
        try expect(.fixed64, for: "fixed64")
        return try readRawFixed64()
    }

    /// Reads the current `I32` field as `sfixed32`.
    @inlinable
    package mutating func readSFixed32() throws -> Int32 {
        try expect(.fixed32, for: "sfixed32")
        return Int32(bitPattern: try readRawFixed32())
    }

    /// Reads the current `I64` field as `sfixed64`.
    @inlinable
    package mutating func readSFixed64() throws -> Int64 {
        try expect(.fixed64, for: "sfixed64")
        return Int64(bitPattern: try readRawFixed64())
    }

    /// Reads the current `I32` field as `float`.
    @inlinable
    package mutating func readFloat() throws -> Float {
        try expect(.fixed32, for: "float")
        return Float(bitPattern: try readRawFixed32())
    }

    /// Reads the current `I64` field as `double`.
    @inlinable
    package mutating func readDouble() throws -> Double {
        try expect(.fixed64, for: "double")
        return Double(bitPattern: try readRawFixed64())
    }

    /// Decodes a zigzag-encoded value: 0, 1, 2, 3, … map to 0, −1, 1, −2, ….
    @inlinable
    package static func zigzagDecode(_ value: UInt64) -> Int64 {
        Int64(bitPattern: value >> 1) ^ -Int64(bitPattern: value & 1)
    }

    // MARK: Length-delimited

    /// Reads the current `LEN` field and returns a view of its bytes, without copying.
    ///
    /// The view borrows the reader's buffer and is valid only while that buffer is.
    @inlinable
    package mutating func readBytesView() throws -> UnsafeRawBufferPointer {
        try expect(.lengthDelimited, for: "bytes")
        let length = try readLength()
        let start = position
        position += length
        return UnsafeRawBufferPointer(rebasing: buffer[start..<start + length])
    }

    /// Reads the current `LEN` field as `bytes`, copied into an array.
    @inlinable
    package mutating func readBytes() throws -> [UInt8] {
        Array(try readBytesView())
    }

    /// Reads the current `LEN` field as a UTF-8 `string`.
    ///
    /// - Throws: ``ProtobufError`` with kind `invalidUTF8` when the bytes are not valid UTF-8.
    @inlinable
    package mutating func readString() throws -> String {
        let start = position
        let bytes = try readBytesView()
        // Names are ASCII; `String(validating:)` is generic and much slower, so it only
        // runs when a byte is not.
        var isASCII = true
        for byte in bytes where byte >= 0x80 {
            isASCII = false
            break
        }
        if isASCII {
            return String(decoding: bytes, as: UTF8.self)
        }
        guard let string = String(validating: bytes, as: UTF8.self) else {
            throw utf8Error(at: start)
        }
        return string
    }

    /// The error for a string field that is not UTF-8.
    @usableFromInline @inline(never)
    func utf8Error(at start: Int) -> ProtobufError {
        ProtobufError(.invalidUTF8, offset: start, tag: tag, "string is not valid UTF-8")
    }

    /// Reads the current `LEN` field as an embedded message and returns a reader over it.
    ///
    /// The child reader reports offsets in the outermost buffer, so errors inside nested
    /// messages still name the position in the file.
    ///
    /// - Throws: ``ProtobufError`` with kind `nestingTooDeep` when the child would be nested
    ///   deeper than ``maxDepth``.
    @inlinable
    package mutating func readMessage() throws -> ProtobufReader {
        try expect(.lengthDelimited, for: "message")
        guard depth < maxDepth else {
            throw nestingError()
        }
        let length = try readLength()
        let start = position
        position += length
        return ProtobufReader(buffer: buffer, start: start, end: start + length, depth: depth + 1, maxDepth: maxDepth)
    }

    /// The error for a message nested deeper than ``maxDepth``.
    @usableFromInline @inline(never)
    func nestingError() -> ProtobufError {
        ProtobufError(.nestingTooDeep, offset: position, tag: tag, "messages nest deeper than \(maxDepth) levels")
    }
}
