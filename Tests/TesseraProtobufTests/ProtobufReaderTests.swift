import Testing

@testable import TesseraProtobuf

/// Runs `body` with a reader over `bytes`.
func withReader<R>(
    _ bytes: [UInt8], maxDepth: Int = ProtobufReader.defaultMaxDepth, _ body: (inout ProtobufReader) throws -> R
) throws -> R {
    try bytes.withUnsafeBytes { buffer in
        var reader = ProtobufReader(buffer, maxDepth: maxDepth)
        return try body(&reader)
    }
}

/// Reads every field of a message, skipping each one; the generic way to walk unknown input.
func skipAll(_ reader: inout ProtobufReader) throws {
    while try reader.nextField() != nil {
        try reader.skipField()
    }
}

/// Expects `body` to throw a ``ProtobufError`` of the given kind, and returns it.
@discardableResult
func expectProtobufError(
    _ kind: ProtobufError.Kind, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void
) -> ProtobufError? {
    do {
        try body()
        Issue.record("expected a \(kind) error, got none", sourceLocation: sourceLocation)
    } catch let error as ProtobufError {
        #expect(error.kind == kind, "\(error)", sourceLocation: sourceLocation)
        return error
    } catch {
        Issue.record("expected ProtobufError, got \(error)", sourceLocation: sourceLocation)
    }
    return nil
}

@Suite("ProtobufReader")
struct ProtobufReaderTests {
    // Byte strings below are written out by hand from the encoding rules in
    // protobuf.dev/programming-guides/encoding, not by ProtobufWriter.

    @Test("varints decode as the encoding guide's examples")
    func varints() throws {
        // 150 = 0x96 0x01 (the guide's example); 1 = 0x01; the largest uint64 = 9 × 0xFF, 0x01.
        let bytes: [UInt8] = [0x08, 0x96, 0x01, 0x10, 0x01] + [0x18] + Array(repeating: 0xFF, count: 9) + [0x01]
        try withReader(bytes) { reader throws in
            #expect(try reader.nextField() == ProtobufTag(fieldNumber: 1, wireType: .varint))
            #expect(try reader.readUInt64() == 150)
            #expect(try reader.nextField()?.fieldNumber == 2)
            #expect(try reader.readBool() == true)
            #expect(try reader.nextField()?.fieldNumber == 3)
            #expect(try reader.readUInt64() == UInt64.max)
            #expect(try reader.nextField() == nil)
            #expect(reader.isAtEnd)
        }
    }

    @Test("negative int32 and int64 use ten-byte two's complement")
    func negativeInts() throws {
        let minusOne: [UInt8] = Array(repeating: 0xFF, count: 9) + [0x01]
        try withReader([0x08] + minusOne + [0x10] + minusOne) { reader throws in
            _ = try reader.nextField()
            #expect(try reader.readInt32() == -1)
            _ = try reader.nextField()
            #expect(try reader.readInt64() == -1)
        }
    }

    @Test("zigzag maps 0, 1, 2, 3, 4294967294, 4294967295 to 0, -1, 1, -2, 2147483647, -2147483648")
    func zigzag() throws {
        let cases: [(UInt64, Int64)] = [
            (0, 0), (1, -1), (2, 1), (3, -2), (4_294_967_294, 2_147_483_647), (4_294_967_295, -2_147_483_648),
            (UInt64.max, Int64.min), (UInt64.max - 1, Int64.max),
        ]
        for (encoded, decoded) in cases {
            #expect(ProtobufReader.zigzagDecode(encoded) == decoded)
        }
        // sint32 field 1 = -2 → zigzag 3.
        try withReader([0x08, 0x03]) { reader throws in
            _ = try reader.nextField()
            #expect(try reader.readSInt32() == -2)
        }
    }

    @Test("fixed-width values are little-endian")
    func fixedWidth() throws {
        let bytes: [UInt8] =
            [0x0D, 0x00, 0x00, 0x80, 0x3F]  // field 1 float 1.0
            + [0x11, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0xC0]  // field 2 double -2.5
            + [0x1D, 0xFE, 0xFF, 0xFF, 0xFF]  // field 3 sfixed32 -2
            + [0x21, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08]  // field 4 fixed64
        try withReader(bytes) { reader throws in
            _ = try reader.nextField()
            #expect(try reader.readFloat() == 1.0)
            _ = try reader.nextField()
            #expect(try reader.readDouble() == -2.5)
            _ = try reader.nextField()
            #expect(try reader.readSFixed32() == -2)
            _ = try reader.nextField()
            #expect(try reader.readFixed64() == 0x0807_0605_0403_0201)
        }
    }

    @Test("strings, bytes and nested messages")
    func lengthDelimited() throws {
        // field 1 "héllo"; field 2 message { field 1 = 7, field 2 "x" }; field 3 bytes [0, 255].
        let hello = Array("héllo".utf8)
        let bytes: [UInt8] =
            [0x0A, UInt8(hello.count)] + hello + [0x12, 0x05, 0x08, 0x07, 0x12, 0x01, 0x78] + [0x1A, 0x02, 0x00, 0xFF]
        try withReader(bytes) { reader throws in
            _ = try reader.nextField()
            #expect(try reader.readString() == "héllo")
            _ = try reader.nextField()
            var child = try reader.readMessage()
            #expect(child.depth == 1)
            #expect(try child.nextField()?.fieldNumber == 1)
            #expect(try child.readInt32() == 7)
            #expect(try child.nextField()?.fieldNumber == 2)
            #expect(child.offset == 2 + hello.count + 5)  // offsets count from the outer buffer
            #expect(try child.readString() == "x")
            #expect(try child.nextField() == nil)
            _ = try reader.nextField()
            #expect(try reader.readBytes() == [0, 255])
            #expect(try reader.nextField() == nil)
        }
    }

    @Test("repeated scalars are accepted packed and unpacked, in any mix")
    func repeatedScalars() throws {
        // field 1: packed [3, 270, 86942] (the guide's example), then one unpacked 5.
        let bytes: [UInt8] = [0x0A, 0x06, 0x03, 0x8E, 0x02, 0x9E, 0xA7, 0x05, 0x08, 0x05]
        let values = try withReader(bytes) { reader throws in
            var values: [Int64] = []
            while try reader.nextField() != nil {
                try reader.readRepeatedInt64(into: &values)
            }
            return values
        }
        #expect(values == [3, 270, 86942, 5])

        // field 2: packed floats [1, -2], then one unpacked 0.5.
        let floats = try withReader(
            [0x12, 0x08, 0x00, 0x00, 0x80, 0x3F, 0x00, 0x00, 0x00, 0xC0, 0x15, 0x00, 0x00, 0x00, 0x3F]
        ) { reader throws in
            var values: [Float] = []
            while try reader.nextField() != nil {
                try reader.readRepeatedFloat(into: &values)
            }
            return values
        }
        #expect(floats == [1, -2, 0.5])
    }

    @Test("unknown fields of every wire type are skipped, groups included")
    func skipUnknown() throws {
        let bytes: [UInt8] =
            [0x08, 0x96, 0x01]  // 1: varint
            + [0x11] + Array(repeating: 0, count: 8)  // 2: fixed64
            + [0x1A, 0x03, 0x61, 0x62, 0x63]  // 3: LEN
            + [0x23, 0x08, 0x01, 0x2B, 0x2C, 0x24]  // 4: group { 1: varint, 5: group {} }
            + [0x35, 0x01, 0x02, 0x03, 0x04]  // 6: fixed32
            + [0x38, 0x2A]  // 7: varint 42, the field we want
        let value = try withReader(bytes) { reader throws -> Int32? in
            var value: Int32?
            while let tag = try reader.nextField() {
                if tag.fieldNumber == 7 { value = try reader.readInt32() } else { try reader.skipField() }
            }
            return value
        }
        #expect(value == 42)
    }

    @Test("the writer round-trips through the reader")
    func writerRoundTrip() throws {
        var writer = ProtobufWriter()
        writer.writeInt64(-5, field: 1)
        writer.writeSInt64(-300, field: 2)
        writer.writeString("name", field: 3)
        writer.writeMessage(field: 4) { $0.writePackedDoubles([1.5, -2], field: 1) }
        writer.writeFixed32(7, field: 536_870_911)
        try withReader(writer.bytes) { reader throws in
            _ = try reader.nextField()
            #expect(try reader.readInt64() == -5)
            _ = try reader.nextField()
            #expect(try reader.readSInt64() == -300)
            _ = try reader.nextField()
            #expect(try reader.readString() == "name")
            _ = try reader.nextField()
            var child = try reader.readMessage()
            var doubles: [Double] = []
            while try child.nextField() != nil { try child.readRepeatedDouble(into: &doubles) }
            #expect(doubles == [1.5, -2])
            #expect(try reader.nextField()?.fieldNumber == 536_870_911)
            #expect(try reader.readFixed32() == 7)
        }
    }
}
