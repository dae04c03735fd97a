/// Vectorised conversion between `Float16` and `Float` that does not depend on the F16C
/// instructions (the default x86-64 target lacks them, so `Float(half)` becomes a library call
/// per element).
///
/// Both directions are exact: half → float is a bit-level widening that keeps subnormals,
/// infinities and NaNs; float → half rounds to nearest, ties to even, overflows to infinity
/// and keeps NaN a (quiet) NaN — the same results as Swift's `Float16(_:)`.
package enum Float16Conversion {
    /// Measured cost of one element either way (about 0.6–0.7 ns), for splitting long runs
    /// across the kernel threads.
    static let cost = ParallelCost(nanosecondsPerItem: 0.7)

    /// Converts `count` halves to floats.
    ///
    /// The loop is branch-free integer and float arithmetic that LLVM vectorises on the
    /// baseline x86-64 target (an earlier `SIMD16` form was ten times slower: Swift split its
    /// masked selects into scalar code). Long runs are split across threads.
    ///
    /// ```swift
    /// Float16Conversion.widen(halves, into: floats, count: n)
    /// ```
    package static func widen(
        _ source: UnsafePointer<Float16>, into destination: UnsafeMutablePointer<Float>, count: Int
    ) {
        let src = UnsafeRawPointer(source).assumingMemoryBound(to: UInt16.self)
        let dst = UnsafeMutableRawPointer(destination).assumingMemoryBound(to: UInt32.self)
        parallelFor(count: count, cost: cost, alignment: 64) { range in
            widenBits(src, dst, range)
        }
    }

    /// Converts `count` floats to halves, rounding to nearest even (same loop style and
    /// threading as ``widen(_:into:count:)``).
    package static func narrow(
        _ source: UnsafePointer<Float>, into destination: UnsafeMutablePointer<Float16>, count: Int
    ) {
        let src = UnsafeRawPointer(source).assumingMemoryBound(to: UInt32.self)
        let dst = UnsafeMutableRawPointer(destination).assumingMemoryBound(to: UInt16.self)
        parallelFor(count: count, cost: cost, alignment: 64) { range in
            narrowBits(src, dst, range)
        }
    }

    /// Half bit patterns to float bit patterns: the exponent is re-biased in integer
    /// arithmetic; a float subtraction renormalises subnormal halves; infinities and NaNs keep
    /// their payload.
    private static func widenBits(
        _ src: UnsafePointer<UInt16>, _ dst: UnsafeMutablePointer<UInt32>, _ range: Range<Int>
    ) {
        let magic = Float(bitPattern: 113 << 23)
        for i in range {
            let h = UInt32(src[i])
            let sign = (h & 0x8000) << 16
            var o = (h & 0x7FFF) << 13
            let exponent = o & 0x0F80_0000
            o &+= (127 - 15) << 23
            let infinityOrNaN = o &+ ((128 - 16) << 23)
            let subnormal = (Float(bitPattern: o &+ (1 << 23)) - magic).bitPattern
            o = exponent == 0x0F80_0000 ? infinityOrNaN : o
            o = exponent == 0 ? subnormal : o
            dst[i] = o | sign
        }
    }

    /// Float bit patterns to half bit patterns: normal halves re-bias the exponent and round
    /// the 13 dropped bits to even; a float addition rounds subnormal halves; overflow gives
    /// infinity and NaN stays a quiet NaN.
    private static func narrowBits(
        _ src: UnsafePointer<UInt32>, _ dst: UnsafeMutablePointer<UInt16>, _ range: Range<Int>
    ) {
        let float32Infinity: UInt32 = 255 << 23
        let half32Overflow: UInt32 = (127 + 16) << 23
        let denormalMagicBits: UInt32 = ((127 - 15) + (23 - 10) + 1) << 23
        let denormalMagic = Float(bitPattern: denormalMagicBits)
        for i in range {
            var f = src[i]
            let sign = f & 0x8000_0000
            f ^= sign
            let large: UInt32 = f > float32Infinity ? 0x7E00 : 0x7C00
            let subnormal = (Float(bitPattern: f) + denormalMagic).bitPattern &- denormalMagicBits
            let mantissaOdd = (f >> 13) & 1
            let normal = (f &+ (UInt32(bitPattern: (15 - 127) << 23) &+ 0xFFF) &+ mantissaOdd) >> 13
            var o = f < (113 << 23) ? subnormal : normal
            o = f >= half32Overflow ? large : o
            dst[i] = UInt16(truncatingIfNeeded: o | (sign >> 16))
        }
    }
}
