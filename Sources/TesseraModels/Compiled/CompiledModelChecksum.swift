import Foundation

/// Checksums for compiled models: they detect truncation and bit flips, not tampering.
///
/// ``checksum(_:seed:)`` is a 64-bit multiply-rotate hash (the round and mixing of
/// xxHash64, without its exact finalization) for small ranges. ``chunked(_:chunkSize:progress:)``
/// covers large ranges at memory speed: a Fletcher-style pair of sums over 64-bit words in
/// 8 lanes per 4 MiB chunk (every word and its position count), chunks summed on all cores,
/// then the per-chunk sums hashed in order.
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

    /// A Fletcher-style digest of one chunk: running sums `a += word`, `b += a` over 64-bit
    /// words in eight lanes (wrapping), then the tail bytes.
    static func fletcher(_ bytes: UnsafeRawBufferPointer) -> (UInt64, UInt64) {
        let count = bytes.count
        guard let base = bytes.baseAddress, count > 0 else { return (0, 0) }
        var a = SIMD8<UInt64>(repeating: 0)
        var b = SIMD8<UInt64>(repeating: 0)
        var offset = 0
        while offset + 64 <= count {
            a &+= base.loadUnaligned(fromByteOffset: offset, as: SIMD8<UInt64>.self)
            b &+= a
            offset += 64
        }
        var sumA = a.wrappedSum()
        var sumB = b.wrappedSum() &+ (a &* SIMD8<UInt64>(1, 2, 3, 4, 5, 6, 7, 8)).wrappedSum()
        while offset < count {
            sumA &+= UInt64(base.load(fromByteOffset: offset, as: UInt8.self)) &+ 1
            sumB &+= sumA
            offset += 1
        }
        return (sumA, sumB &+ UInt64(count))
    }

    /// A checksum of a large range: ``fletcher(_:)`` per chunk on all cores, the chunk
    /// digests hashed in order. `progress` is called with the bytes done after the chunks.
    static func chunked(
        _ bytes: UnsafeRawBufferPointer, chunkSize: Int, progress: (Int) -> Void = { _ in }
    ) -> UInt64 {
        let chunks = (bytes.count + chunkSize - 1) / chunkSize
        guard chunks > 0 else { return checksum(bytes) }
        var digests = [UInt64](repeating: 0, count: 2 * chunks)
        digests.withUnsafeMutableBufferPointer { output in
            nonisolated(unsafe) let sendable = output.baseAddress!
            nonisolated(unsafe) let input = bytes
            DispatchQueue.concurrentPerform(iterations: chunks) { index in
                let start = index * chunkSize
                let end = min(start + chunkSize, input.count)
                let (a, b) = fletcher(UnsafeRawBufferPointer(rebasing: input[start..<end]))
                sendable[2 * index] = a
                sendable[2 * index + 1] = b
            }
        }
        progress(bytes.count)
        return digests.withUnsafeBytes { checksum($0, seed: UInt64(bytes.count)) }
    }
}
