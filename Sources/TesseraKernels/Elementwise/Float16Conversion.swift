/// Vectorised conversion between `Float16` and `Float` that does not depend on the F16C
/// instructions (the default x86-64 target lacks them, so `Float(half)` becomes a library call
/// per element).
///
/// Both directions are exact: half → float is a bit-level widening that keeps subnormals,
/// infinities and NaNs; float → half rounds to nearest, ties to even, overflows to infinity
/// and keeps NaN a (quiet) NaN — the same results as Swift's `Float16(_:)`.
public enum Float16Conversion {
    /// Converts `count` halves to floats.
    ///
    /// ```swift
    /// Float16Conversion.widen(halves, into: floats, count: n)
    /// ```
    public static func widen(
        _ source: UnsafePointer<Float16>, into destination: UnsafeMutablePointer<Float>, count: Int
    ) {
        let src = UnsafeRawPointer(source)
        let dst = UnsafeMutableRawPointer(destination)
        var i = 0
        while i + 16 <= count {
            let bits = src.loadUnaligned(fromByteOffset: i * 2, as: SIMD16<UInt16>.self)
            dst.storeBytes(of: widen(bits), toByteOffset: i * 4, as: SIMD16<Float>.self)
            i += 16
        }
        if i < count {
            var bits = SIMD16<UInt16>(repeating: 0)
            for lane in 0..<(count - i) { bits[lane] = source[i + lane].bitPattern }
            let floats = widen(bits)
            for lane in 0..<(count - i) { destination[i + lane] = floats[lane] }
        }
    }

    /// Converts `count` floats to halves, rounding to nearest even.
    public static func narrow(
        _ source: UnsafePointer<Float>, into destination: UnsafeMutablePointer<Float16>, count: Int
    ) {
        let src = UnsafeRawPointer(source)
        let dst = UnsafeMutableRawPointer(destination)
        var i = 0
        while i + 16 <= count {
            let floats = src.loadUnaligned(fromByteOffset: i * 4, as: SIMD16<Float>.self)
            dst.storeBytes(of: narrow(floats), toByteOffset: i * 2, as: SIMD16<UInt16>.self)
            i += 16
        }
        if i < count {
            var floats = SIMD16<Float>(repeating: 0)
            for lane in 0..<(count - i) { floats[lane] = source[i + lane] }
            let bits = narrow(floats)
            for lane in 0..<(count - i) { destination[i + lane] = Float16(bitPattern: bits[lane]) }
        }
    }

    /// Sixteen half bit patterns to floats.
    @inlinable
    @inline(__always)
    public static func widen(_ half: SIMD16<UInt16>) -> SIMD16<Float> {
        let h = SIMD16<UInt32>(truncatingIfNeeded: half)
        let sign = (h & 0x8000) &<< 16
        let magnitude = h & 0x7FFF
        // Shifting the exponent and mantissa into float position and multiplying by 2^112
        // re-biases the exponent; subnormal halves become float subnormals times 2^112, which
        // is exact.
        let shifted = unsafeBitCast(magnitude &<< 13, to: SIMD16<Float>.self)
        var bits = unsafeBitCast(shifted * Float(sign: .plus, exponent: 112, significand: 1), to: SIMD16<UInt32>.self)
        bits.replace(with: (magnitude &<< 13) | 0x7F80_0000, where: magnitude .>= 0x7C00)
        return unsafeBitCast(bits | sign, to: SIMD16<Float>.self)
    }

    /// Sixteen floats to half bit patterns, rounding to nearest even.
    @inlinable
    @inline(__always)
    public static func narrow(_ value: SIMD16<Float>) -> SIMD16<UInt16> {
        var f = unsafeBitCast(value, to: SIMD16<UInt32>.self)
        let sign = f & 0x8000_0000
        f ^= sign
        let float32Infinity: UInt32 = 255 << 23
        let half32Overflow: UInt32 = (127 + 16) << 23
        let denormalMagic: UInt32 = ((127 - 15) + (23 - 10) + 1) << 23
        // Normal halves: re-bias the exponent and round the 13 dropped mantissa bits to even.
        let mantissaOdd = (f &>> 13) & 1
        var normal = f &+ (UInt32(bitPattern: (15 - 127) << 23) &+ 0xFFF)
        normal = (normal &+ mantissaOdd) &>> 13
        // Subnormal halves: let a float addition do the rounding.
        let subnormalSum = unsafeBitCast(f, to: SIMD16<Float>.self) + Float(bitPattern: denormalMagic)
        let subnormal = unsafeBitCast(subnormalSum, to: SIMD16<UInt32>.self) &- denormalMagic
        var out = normal
        out.replace(with: subnormal, where: f .< (113 << 23))
        out.replace(with: 0x7C00, where: f .>= half32Overflow)
        out.replace(with: 0x7E00, where: f .> float32Infinity)
        out |= sign &>> 16
        return SIMD16<UInt16>(truncatingIfNeeded: out)
    }
}
