import CTesseraSIMD

/// Vectorised transcendental functions on `SIMD16<Float>`, for kernels whose inner loops
/// would otherwise call the C library once per element.
///
/// Accuracy is within a few ulp of the C library over the normal range; results that would
/// be subnormal flush to zero.
package enum SIMDMath {
    /// The correctly rounded square root of each lane, as one vector instruction per
    /// register (Swift's `squareRoot()` on SIMD types calls `sqrtf` once per lane).
    @inlinable
    @inline(__always)
    package static func sqrt(_ x: SIMD16<Float>) -> SIMD16<Float> {
        tessera_sqrt_f32x16(x)
    }

    /// The correctly rounded square root of each lane.
    @inlinable
    @inline(__always)
    package static func sqrt(_ x: SIMD16<Double>) -> SIMD16<Double> {
        tessera_sqrt_f64x16(x)
    }

    /// `e^x` for each lane (Cephes-style range reduction and a degree-6 polynomial).
    ///
    /// `exp(-inf) == 0`, `exp(+inf) == +inf`, NaN stays NaN; inputs below about -87.3 give 0.
    @inlinable
    @inline(__always)
    package static func exp(_ x: SIMD16<Float>) -> SIMD16<Float> {
        let high: Float = 88.72283
        let low: Float = -87.33654
        var v = x.replacing(with: high, where: x .> high)
        v.replace(with: low, where: x .< low)
        // n = round(v / ln 2) by the 1.5·2²³ trick: adding it leaves n in the low mantissa
        // bits, so the integer comes from the bit pattern with no float→int conversion.
        let magic: Float = 12_582_912
        let shifted = v * 1.442695041 + magic
        let n = shifted - magic
        let ni = unsafeBitCast(shifted, to: SIMD16<Int32>.self) &- 0x4B40_0000
        v = v - n * 0.693359375
        v = v + n * 2.12194440e-4
        let z = v * v
        var y = SIMD16<Float>(repeating: 1.9875691500e-4)
        y = y * v + 1.3981999507e-3
        y = y * v + 8.3334519073e-3
        y = y * v + 4.1665795894e-2
        y = y * v + 1.6666665459e-1
        y = y * v + 5.0000001201e-1
        y = y * z + v + 1
        // 2^n by building the exponent bits; n is in [-126, 128], so split the scale in two
        // to stay in range at the top end.
        let half = ni &>> 1
        let scaleA = unsafeBitCast((half &+ 127) &<< 23, to: SIMD16<Float>.self)
        let scaleB = unsafeBitCast((ni &- half &+ 127) &<< 23, to: SIMD16<Float>.self)
        var result = y * scaleA * scaleB
        result.replace(with: 0, where: x .< low)
        result.replace(with: .infinity, where: x .> high)
        result.replace(with: x, where: x .!= x)
        return result
    }

    /// Whether the AVX2 + FMA block kernels of `CTesseraSIMD` run on this CPU.
    package static let hasAVX2FMA: Bool = tessera_cpu_has_avx2_fma() != 0

    /// `dst[i] = e^(src[i] - shift)` for `i < count` (`dst` may be `nil` to only sum), and the
    /// sum of those exponentials.
    ///
    /// Runs the AVX2 + FMA kernel when the CPU has it (eight lanes per instruction, fused
    /// multiply-adds; results within an ulp of ``exp(_:)-(SIMD16<Float>)``), otherwise the
    /// `SIMD16` body.
    package static func expShifted(
        _ src: UnsafePointer<Float>, into dst: UnsafeMutablePointer<Float>?, count: Int, shift: Float
    ) -> Float {
        if hasAVX2FMA { return tessera_exp_shifted_f32_vector(src, dst, count, shift) }
        let s = SIMD16<Float>(repeating: shift)
        var sum = SIMD16<Float>()
        var i = 0
        while i < count {
            let lanes = Swift.min(16, count - i)
            var x = SIMD16<Float>(repeating: -.infinity)
            if lanes == 16 {
                x = UnsafeRawPointer(src + i).loadUnaligned(as: SIMD16<Float>.self)
            } else {
                for lane in 0..<lanes { x[lane] = src[i + lane] }
            }
            let e = exp(x - s)
            if let dst { for lane in 0..<lanes { dst[i + lane] = e[lane] } }
            sum += e
            i += lanes
        }
        return sum.sum()
    }

    /// `e^x` for one value, matching the lanes of ``exp(_:)-(SIMD16<Float>)`` exactly.
    @inlinable
    package static func exp(_ x: Float) -> Float {
        exp(SIMD16<Float>(repeating: x))[0]
    }
}
