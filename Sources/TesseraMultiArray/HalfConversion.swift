import TesseraKernels

/// `Float16` ⇄ `Float` over contiguous memory, as plain loops of branch-free integer and float
/// operations that LLVM vectorises on the baseline x86-64 target (no F16C needed).
///
/// Large runs are split across the kernel threads (`parallelFor`). Exact, with the same results as Swift's `Float(_: Float16)` and `Float16(_: Float)`: widening
/// keeps subnormals, infinities and NaNs; narrowing rounds to nearest, ties to even, overflows
/// to infinity and keeps NaN a quiet NaN. (The bit tricks are the well-known "fast half
/// conversion" ones: a float multiply or add does the subnormal cases.)
///
/// Why not `TesseraKernels.Float16Conversion`: on T10's 240,000 elements it measured 1.8 ms
/// widening and 9.2 ms narrowing on this machine; these loops take 0.14 and 0.17 ms
/// (Docs/Performance.md).
enum HalfConversion {
    /// Measured cost of one element either way (~0.6–0.7 ns), for splitting large runs across
    /// threads.
    static let cost = ParallelCost(nanosecondsPerItem: 0.7)

    /// Converts `count` halves at `source` to floats at `destination`.
    static func widen(_ source: UnsafeRawPointer, into destination: UnsafeMutableRawPointer, count: Int) {
        parallelFor(count: count, cost: cost, alignment: 64) { range in
            widen(source, into: destination, range: range)
        }
    }

    /// Converts `count` floats at `source` to halves at `destination`, rounding to nearest even.
    static func narrow(_ source: UnsafeRawPointer, into destination: UnsafeMutableRawPointer, count: Int) {
        parallelFor(count: count, cost: cost, alignment: 64) { range in
            narrow(source, into: destination, range: range)
        }
    }

    private static func widen(_ source: UnsafeRawPointer, into destination: UnsafeMutableRawPointer, range: Range<Int>)
    {
        let src = source.assumingMemoryBound(to: UInt16.self)
        let dst = destination.assumingMemoryBound(to: UInt32.self)
        let magic = Float(bitPattern: 113 << 23)
        for i in range {
            let h = UInt32(src[i])
            let sign = (h & 0x8000) << 16
            var o = (h & 0x7FFF) << 13
            let exponent = o & 0x0F80_0000
            o &+= (127 - 15) << 23
            let infinityOrNaN = o &+ ((128 - 16) << 23)
            // Subnormal halves: let a float subtraction renormalise the mantissa.
            let subnormal = (Float(bitPattern: o &+ (1 << 23)) - magic).bitPattern
            o = exponent == 0x0F80_0000 ? infinityOrNaN : o
            o = exponent == 0 ? subnormal : o
            dst[i] = o | sign
        }
    }

    private static func narrow(_ source: UnsafeRawPointer, into destination: UnsafeMutableRawPointer, range: Range<Int>)
    {
        let src = source.assumingMemoryBound(to: UInt32.self)
        let dst = destination.assumingMemoryBound(to: UInt16.self)
        let float32Infinity: UInt32 = 255 << 23
        let half32Overflow: UInt32 = (127 + 16) << 23
        let denormalMagicBits: UInt32 = ((127 - 15) + (23 - 10) + 1) << 23
        let denormalMagic = Float(bitPattern: denormalMagicBits)
        for i in range {
            var f = src[i]
            let sign = f & 0x8000_0000
            f ^= sign
            let large: UInt32 = f > float32Infinity ? 0x7E00 : 0x7C00
            // Subnormal halves: let a float addition do the rounding.
            let subnormal = (Float(bitPattern: f) + denormalMagic).bitPattern &- denormalMagicBits
            // Normal halves: re-bias the exponent and round the 13 dropped bits to even.
            let mantissaOdd = (f >> 13) & 1
            let normal = (f &+ (UInt32(bitPattern: (15 - 127) << 23) &+ 0xFFF) &+ mantissaOdd) >> 13
            var o = f < (113 << 23) ? subnormal : normal
            o = f >= half32Overflow ? large : o
            dst[i] = UInt16(truncatingIfNeeded: o | (sign >> 16))
        }
    }
}
