import Testing

@testable import TesseraProtobuf

@Suite("ProtobufReader on malformed input")
struct ProtobufReaderMalformedTests {
    @Test("a truncated varint names its offset and field")
    func truncatedVarint() {
        let error = expectProtobufError(.truncated) {
            try withReader([0x08, 0x96, 0x01, 0x10, 0x96]) { reader throws in
                _ = try reader.nextField()
                _ = try reader.readUInt64()
                _ = try reader.nextField()
                _ = try reader.readUInt64()
            }
        }
        #expect(error?.offset == 4)
        #expect(error?.tag == ProtobufTag(fieldNumber: 2, wireType: .varint))
        #expect(error?.description == "truncated varint at byte 4 (field 2 (VARINT))")
    }

    @Test("an eleven-byte or overflowing varint is rejected")
    func overlongVarint() {
        expectProtobufError(.malformedVarint) {
            try withReader([0x08] + Array(repeating: 0xFF, count: 10) + [0x01]) { reader throws in
                _ = try reader.nextField()
                _ = try reader.readUInt64()
            }
        }
        expectProtobufError(.malformedVarint) {
            try withReader([0x08] + Array(repeating: 0xFF, count: 9) + [0x02]) { reader throws in
                _ = try reader.nextField()
                _ = try reader.readUInt64()
            }
        }
    }

    @Test("wire types 6 and 7, stray end-groups and field number 0 are rejected")
    func badTags() {
        expectProtobufError(.invalidWireType) { try withReader([0x0E]) { try skipAll(&$0) } }
        expectProtobufError(.invalidWireType) { try withReader([0x0F]) { try skipAll(&$0) } }
        expectProtobufError(.invalidWireType) { try withReader([0x0C]) { try skipAll(&$0) } }
        expectProtobufError(.invalidFieldNumber) { try withReader([0x00, 0x00]) { try skipAll(&$0) } }
        // Field number 2^29 is one past the largest.
        expectProtobufError(.invalidFieldNumber) {
            try withReader([0x80, 0x80, 0x80, 0x80, 0x10]) { try skipAll(&$0) }
        }
        // A group closed by a different field's end tag.
        expectProtobufError(.invalidWireType) { try withReader([0x0B, 0x14]) { try skipAll(&$0) } }
        expectProtobufError(.truncated) { try withReader([0x0B, 0x08, 0x01]) { try skipAll(&$0) } }
    }

    @Test("lengths past the end are rejected, including lengths near 2^64")
    func lengthsPastEnd() {
        expectProtobufError(.truncated) { try withReader([0x0A, 0x05, 0x61]) { try skipAll(&$0) } }
        expectProtobufError(.truncated) {
            try withReader([0x0A] + Array(repeating: 0xFF, count: 9) + [0x01]) { try skipAll(&$0) }
        }
        expectProtobufError(.truncated) {
            try withReader([0x0A, 0x05, 0x61]) { reader throws in
                _ = try reader.nextField()
                _ = try reader.readString()
            }
        }
        expectProtobufError(.truncated) { try withReader([0x0D, 0x00, 0x00]) { try skipAll(&$0) } }
        expectProtobufError(.truncated) { try withReader([0x09, 0x00]) { try skipAll(&$0) } }
    }

    @Test("a child message cannot read past its own length")
    func childBounds() throws {
        // field 1 message of length 2 holding the start of a 3-byte string, then field 2.
        let error = expectProtobufError(.truncated) {
            try withReader([0x0A, 0x02, 0x0A, 0x03, 0x10, 0x01, 0x02]) { reader throws in
                _ = try reader.nextField()
                var child = try reader.readMessage()
                try skipAll(&child)
            }
        }
        #expect(error?.offset == 3)
    }

    @Test("packed fields must hold whole values")
    func packedBounds() {
        expectProtobufError(.truncated) {
            try withReader([0x0A, 0x03, 0x00, 0x00, 0x80]) { reader throws in
                _ = try reader.nextField()
                var values: [Float] = []
                try reader.readRepeatedFloat(into: &values)
            }
        }
        // A packed varint whose last byte has the continuation bit runs into the next field.
        expectProtobufError(.truncated) {
            try withReader([0x0A, 0x01, 0x96, 0x01]) { reader throws in
                _ = try reader.nextField()
                var values: [Int64] = []
                try reader.readRepeatedInt64(into: &values)
            }
        }
    }

    @Test("typed reads check the wire type")
    func wireTypeMismatch() {
        let error = expectProtobufError(.wireTypeMismatch) {
            try withReader([0x0A, 0x01, 0x61]) { reader throws in
                _ = try reader.nextField()
                _ = try reader.readInt64()
            }
        }
        #expect(error?.message == "a int64 value needs wire type VARINT, not LEN")
        expectProtobufError(.wireTypeMismatch) {
            try withReader([0x08, 0x01]) { reader throws in
                _ = try reader.nextField()
                _ = try reader.readMessage()
            }
        }
    }

    @Test("invalid UTF-8 in a string field throws")
    func invalidUTF8() {
        expectProtobufError(.invalidUTF8) {
            try withReader([0x0A, 0x02, 0xC3, 0x28]) { reader throws in
                _ = try reader.nextField()
                _ = try reader.readString()
            }
        }
    }

    @Test("nesting deeper than the limit throws instead of overflowing the stack")
    func nestingLimit() throws {
        // 200 messages, each the only field 1 of its parent.
        var bytes: [UInt8] = []
        for _ in 0..<200 {
            var writer = ProtobufWriter()
            writer.writeBytes(bytes, field: 1)
            bytes = writer.bytes
        }
        func descend(_ reader: inout ProtobufReader) throws -> Int {
            var deepest = reader.depth
            while try reader.nextField() != nil {
                var child = try reader.readMessage()
                deepest = max(deepest, try descend(&child))
            }
            return deepest
        }
        expectProtobufError(.nestingTooDeep) { _ = try withReader(bytes, maxDepth: 50) { try descend(&$0) } }
        #expect(try withReader(bytes, maxDepth: 250) { try descend(&$0) } == 200)
        // Groups count towards the limit too.
        let groups = Array(repeating: UInt8(0x0B), count: 300) + Array(repeating: UInt8(0x0C), count: 300)
        expectProtobufError(.nestingTooDeep) { try withReader(groups) { try skipAll(&$0) } }
    }

    @Test("every truncation and every single-bit flip of a valid message throws or decodes, never crashes")
    func fuzzTruncationAndBitFlips() throws {
        var writer = ProtobufWriter()
        writer.writeInt64(-7, field: 1)
        writer.writeString("tessera", field: 2)
        writer.writeMessage(field: 3) { child in
            child.writePackedFloats([1, 2, 3], field: 1)
            child.writeMessage(field: 2) { $0.writeDouble(0.25, field: 9) }
        }
        writer.writeFixed32(3, field: 4)
        let valid = writer.bytes

        func walk(_ reader: inout ProtobufReader) throws {
            while let tag = try reader.nextField() {
                if tag.wireType == .lengthDelimited, tag.fieldNumber == 3 {
                    var child = try reader.readMessage()
                    try walk(&child)
                } else {
                    try reader.skipField()
                }
            }
        }
        try withReader(valid) { try walk(&$0) }
        var failures = 0
        for length in 0..<valid.count {
            do { try withReader(Array(valid[..<length])) { try walk(&$0) } } catch is ProtobufError { failures += 1 }
        }
        #expect(failures > 0)
        for index in valid.indices {
            for bit in 0..<8 {
                var flipped = valid
                flipped[index] ^= 1 << bit
                do { try withReader(flipped) { try walk(&$0) } } catch is ProtobufError {}
            }
        }
    }
}
