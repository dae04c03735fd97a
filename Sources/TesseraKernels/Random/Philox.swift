/// The Philox-4×32-10 counter-based generator (Salmon et al., "Parallel random numbers: as
/// easy as 1, 2, 3", SC 2011; the generator of Random123, cuRAND and JAX's `rbg`).
///
/// A block of four 32-bit words is a pure function of a 128-bit counter and a 64-bit key,
/// so element `i` of a random tensor is the same whatever the thread count or the order of
/// evaluation, and a seed reproduces a tensor exactly on every machine.
///
/// ```swift
/// let words = Philox4x32(key: 42).block(0)   // four UInt32s
/// ```
package struct Philox4x32: Sendable, Hashable {
    /// The key: the seed.
    package var key: (UInt32, UInt32) { (k0, k1) }
    @usableFromInline let k0: UInt32
    @usableFromInline let k1: UInt32

    /// A generator keyed by a 64-bit seed (low word first).
    package init(key seed: UInt64) {
        k0 = UInt32(truncatingIfNeeded: seed)
        k1 = UInt32(truncatingIfNeeded: seed >> 32)
    }

    /// The block for the 128-bit counter `(c0, c1, c2, c3)`.
    @inlinable
    package func block(_ c0: UInt32, _ c1: UInt32, _ c2: UInt32, _ c3: UInt32) -> SIMD4<UInt32> {
        var (x0, x1, x2, x3) = (c0, c1, c2, c3)
        var (key0, key1) = (k0, k1)
        for round in 0..<10 {
            if round > 0 {
                key0 &+= 0x9E37_79B9
                key1 &+= 0xBB67_AE85
            }
            let p0 = UInt64(0xD251_1F53) &* UInt64(x0)
            let p1 = UInt64(0xCD9E_8D57) &* UInt64(x2)
            let hi0 = UInt32(truncatingIfNeeded: p0 >> 32)
            let lo0 = UInt32(truncatingIfNeeded: p0)
            let hi1 = UInt32(truncatingIfNeeded: p1 >> 32)
            let lo1 = UInt32(truncatingIfNeeded: p1)
            (x0, x1, x2, x3) = (hi1 ^ x1 ^ key0, lo1, hi0 ^ x3 ^ key1, lo0)
        }
        return SIMD4(x0, x1, x2, x3)
    }

    /// The block for a 64-bit counter (the high words zero).
    @inlinable
    package func block(_ counter: UInt64) -> SIMD4<UInt32> {
        block(UInt32(truncatingIfNeeded: counter), UInt32(truncatingIfNeeded: counter >> 32), 0, 0)
    }
}
