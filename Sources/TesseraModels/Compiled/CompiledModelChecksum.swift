/// A 64-bit checksum of a byte range: four independent multiply-rotate lanes over 32-byte
/// blocks, then the tail (the round and mixing of xxHash64, without its exact finalization).
///
/// It detects truncation and bit flips in a compiled model, not tampering, and runs at
/// memory speed so verifying tens of megabytes of weights costs a few milliseconds.
enum CompiledModelChecksum {
    private static let prime1: UInt64 = 0x9E37_79B1_85EB_CA87
    private static let prime2: UInt64 = 0xC2B2_AE3D_27D4_EB4F
    private static let prime3: UInt64 = 0x1656_67B1_9E37_79F9
    private static let prime4: UInt64 = 0x85EB_CA77_C2B2_AE63

    /// One lane step.
    @inline(__always)
    private static func round(_ lane: UInt64, _ input: UInt64) -> UInt64 {
        let mixed = lane &+ input &* prime2
        return ((mixed << 31) | (mixed >> 33)) &* prime1
    }

    /// The checksum of `bytes`, seeded with `seed`.
    static func checksum(_ bytes: UnsafeRawBufferPointer, seed: UInt64 = 0) -> UInt64 {
        let count = bytes.count
        guard let base = bytes.baseAddress, count > 0 else { return seed ^ prime3 }
        var lane0 = seed &+ prime1 &+ prime2
        var lane1 = seed &+ prime2
        var lane2 = seed
        var lane3 = seed &- prime1
        var offset = 0
        while offset + 32 <= count {
            lane0 = round(lane0, UInt64(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt64.self)))
            lane1 = round(lane1, UInt64(littleEndian: base.loadUnaligned(fromByteOffset: offset + 8, as: UInt64.self)))
            lane2 = round(lane2, UInt64(littleEndian: base.loadUnaligned(fromByteOffset: offset + 16, as: UInt64.self)))
            lane3 = round(lane3, UInt64(littleEndian: base.loadUnaligned(fromByteOffset: offset + 24, as: UInt64.self)))
            offset += 32
        }
        var hash =
            ((lane0 << 1) | (lane0 >> 63)) &+ ((lane1 << 7) | (lane1 >> 57)) &+ ((lane2 << 12) | (lane2 >> 52))
            &+ ((lane3 << 18) | (lane3 >> 46))
        hash = (hash ^ round(0, lane0)) &* prime1 &+ prime4
        hash = (hash ^ round(0, lane1)) &* prime1 &+ prime4
        hash = (hash ^ round(0, lane2)) &* prime1 &+ prime4
        hash = (hash ^ round(0, lane3)) &* prime1 &+ prime4
        hash = hash &+ UInt64(count)
        while offset < count {
            hash ^= UInt64(base.load(fromByteOffset: offset, as: UInt8.self)) &* prime3
            hash = ((hash << 11) | (hash >> 53)) &* prime1
            offset += 1
        }
        hash ^= hash >> 33
        hash = hash &* prime2
        hash ^= hash >> 29
        hash = hash &* prime3
        hash ^= hash >> 32
        return hash
    }
}
