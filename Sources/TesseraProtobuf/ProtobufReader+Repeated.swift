extension ProtobufReader {
    /// Appends the values of a repeated varint field, packed or not, to `values`.
    ///
    /// Proto3 writes repeated scalars packed (one `LEN` field holding every value), but a
    /// parser must also accept one `VARINT` field per value, so this accepts both.
    ///
    /// - Parameter transform: Converts each raw varint (e.g. truncation to `Int32`).
    @inlinable
    package mutating func readRepeatedVarint<T>(into values: inout [T], _ transform: (UInt64) -> T) throws {
        guard let tag else {
            throw ProtobufError(.wireTypeMismatch, offset: position, "readRepeatedVarint called before nextField()")
        }
        switch tag.wireType {
        case .varint:
            values.append(transform(try readRawVarint()))
        case .lengthDelimited:
            let length = try readLength()
            let packedEnd = position + length
            // Every varint is at least one byte, so `length` bounds the count.
            values.reserveCapacity(values.count + length)
            while position < packedEnd {
                let start = position
                let value = try readRawVarint()
                guard position <= packedEnd else {
                    throw ProtobufError(
                        .truncated, offset: start, tag: tag, "packed varint runs past the end of its field")
                }
                values.append(transform(value))
            }
        default:
            throw ProtobufError(
                .wireTypeMismatch, offset: position, tag: tag, "a repeated varint field needs wire type VARINT or LEN")
        }
    }

    /// Appends the values of a repeated `int64` field, packed or not.
    @inlinable
    package mutating func readRepeatedInt64(into values: inout [Int64]) throws {
        try readRepeatedVarint(into: &values) { Int64(bitPattern: $0) }
    }

    /// Appends the values of a repeated `uint64` field, packed or not.
    @inlinable
    package mutating func readRepeatedUInt64(into values: inout [UInt64]) throws {
        try readRepeatedVarint(into: &values) { $0 }
    }

    /// Appends the values of a repeated `int32` field, packed or not.
    @inlinable
    package mutating func readRepeatedInt32(into values: inout [Int32]) throws {
        try readRepeatedVarint(into: &values) { Int32(truncatingIfNeeded: $0) }
    }

    /// Appends the values of a repeated `bool` field, packed or not.
    @inlinable
    package mutating func readRepeatedBool(into values: inout [Bool]) throws {
        try readRepeatedVarint(into: &values) { $0 != 0 }
    }

    /// Appends the values of a repeated `float` field, packed or not.
    @inlinable
    package mutating func readRepeatedFloat(into values: inout [Float]) throws {
        try readRepeatedFixedWidth(into: &values, wireType: .fixed32) { buffer, offset in
            Float(bitPattern: UInt32(littleEndian: buffer.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
        }
    }

    /// Appends the values of a repeated `double` field, packed or not.
    @inlinable
    package mutating func readRepeatedDouble(into values: inout [Double]) throws {
        try readRepeatedFixedWidth(into: &values, wireType: .fixed64) { buffer, offset in
            Double(bitPattern: UInt64(littleEndian: buffer.loadUnaligned(fromByteOffset: offset, as: UInt64.self)))
        }
    }

    /// Appends the values of a repeated `fixed32` field, packed or not.
    @inlinable
    package mutating func readRepeatedFixed32(into values: inout [UInt32]) throws {
        try readRepeatedFixedWidth(into: &values, wireType: .fixed32) { buffer, offset in
            UInt32(littleEndian: buffer.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
        }
    }

    /// Appends the values of a repeated `fixed64` field, packed or not.
    @inlinable
    package mutating func readRepeatedFixed64(into values: inout [UInt64]) throws {
        try readRepeatedFixedWidth(into: &values, wireType: .fixed64) { buffer, offset in
            UInt64(littleEndian: buffer.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
        }
    }

    /// Appends a repeated fixed-width field: one value of `wireType`, or a packed `LEN` run
    /// whose length must be a whole number of values.
    @inlinable
    mutating func readRepeatedFixedWidth<T>(
        into values: inout [T], wireType: ProtobufWireType,
        _ load: (UnsafeRawBufferPointer, Int) -> T
    ) throws {
        let width = wireType == .fixed32 ? 4 : 8
        guard let tag else {
            throw ProtobufError(.wireTypeMismatch, offset: position, "repeated read called before nextField()")
        }
        if tag.wireType.rawValue == wireType.rawValue {
            let start = position
            try advance(by: width)
            values.append(load(buffer, start))
            return
        }
        switch tag.wireType {
        case .lengthDelimited:
            let start = position
            let length = try readLength()
            guard length % width == 0 else {
                throw ProtobufError(
                    .truncated, offset: start, tag: tag,
                    "packed field of \(length) bytes is not a whole number of \(width)-byte values")
            }
            let first = position
            position += length
            values.reserveCapacity(values.count + length / width)
            for offset in stride(from: first, to: first + length, by: width) {
                values.append(load(buffer, offset))
            }
        default:
            throw ProtobufError(
                .wireTypeMismatch, offset: position, tag: tag,
                "a repeated fixed-width field needs wire type \(wireType) or LEN")
        }
    }
}
