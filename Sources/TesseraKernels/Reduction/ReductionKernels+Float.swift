import CTesseraSIMD

/// The `Float` inner loops of the reductions: `SIMD16<Float>` bodies with several
/// independent accumulators and a scalar tail.
enum FloatReduction {
    @inline(__always)
    static func load(_ p: UnsafePointer<Float>) -> SIMD16<Float> {
        UnsafeRawPointer(p).loadUnaligned(as: SIMD16<Float>.self)
    }

    @inline(__always)
    static func store(_ v: SIMD16<Float>, _ p: UnsafeMutablePointer<Float>) {
        UnsafeMutableRawPointer(p).storeBytes(of: v, as: SIMD16<Float>.self)
    }

    /// The sum of the lanes by halving (the generic `SIMD.sum()` is an out-of-line call).
    @inline(__always)
    static func horizontalSum(_ v: SIMD16<Float>) -> Float {
        let v8 = v.lowHalf + v.highHalf
        let v4 = v8.lowHalf + v8.highHalf
        let v2 = v4.lowHalf + v4.highHalf
        return v2[0] + v2[1]
    }

    /// The sum of `p[0..<count]` with four vector accumulators (64 partial sums).
    ///
    /// Long runs go to the C kernel, which does the same additions in the same order with
    /// AVX-512 or AVX2 instructions (Swift's `SIMD16` compiles to four SSE registers here).
    @inline(__always)
    static func sum(_ p: UnsafePointer<Float>, count: Int) -> Float {
        if count >= 64 && SIMDMath.hasAVX2FMA { return tessera_sum_f32_vector(p, count) }
        return portableSum(p, count: count)
    }

    /// ``sum(_:count:)`` in Swift `SIMD16` code (any CPU; the reference the C kernel matches).
    @inline(__always)
    static func portableSum(_ p: UnsafePointer<Float>, count: Int) -> Float {
        if count < 16 {
            var total: Float = 0
            for i in 0..<count { total += p[i] }
            return total
        }
        var a0 = SIMD16<Float>()
        var a1 = SIMD16<Float>()
        var a2 = SIMD16<Float>()
        var a3 = SIMD16<Float>()
        var i = 0
        while i + 64 <= count {
            a0 += load(p + i)
            a1 += load(p + i + 16)
            a2 += load(p + i + 32)
            a3 += load(p + i + 48)
            i += 64
        }
        while i + 16 <= count {
            a0 += load(p + i)
            i += 16
        }
        var tail: Float = 0
        while i < count {
            tail += p[i]
            i += 1
        }
        return horizontalSum((a0 + a1) + (a2 + a3)) + tail
    }

    /// The product of `p[0..<count]` with two vector accumulators.
    static func product(_ p: UnsafePointer<Float>, count: Int) -> Float {
        var a0 = SIMD16<Float>(repeating: 1)
        var a1 = SIMD16<Float>(repeating: 1)
        var i = 0
        while i + 32 <= count {
            a0 *= load(p + i)
            a1 *= load(p + i + 16)
            i += 32
        }
        while i + 16 <= count {
            a0 *= load(p + i)
            i += 16
        }
        var result: Float = 1
        let a = a0 * a1
        for lane in 0..<16 { result *= a[lane] }
        while i < count {
            result *= p[i]
            i += 1
        }
        return result
    }

    /// Lanes where `x` replaces `acc` in a NaN-propagating max (or min): `x` is better, or
    /// NaN. Once a lane holds NaN nothing compares better, so it stays NaN.
    @inline(__always)
    static func replacing(_ acc: SIMD16<Float>, _ x: SIMD16<Float>, isMax: Bool) -> SIMD16<Float> {
        let better = isMax ? x .> acc : x .< acc
        return acc.replacing(with: x, where: better .| (x .!= x))
    }

    /// The NaN-propagating maximum (`isMax`) or minimum of `p[0..<count]`; `∓inf` when empty.
    ///
    /// The vector loop ignores NaN in the comparisons and records it in a separate integer
    /// mask (cheaper than a NaN-sticky select; `pointwiseMax` is far slower still).
    @inline(__always)
    static func extremum(_ p: UnsafePointer<Float>, count: Int, isMax: Bool) -> Float {
        let start: Float = isMax ? -.infinity : .infinity
        var a0 = SIMD16<Float>(repeating: start)
        var a1 = a0
        var a2 = a0
        var a3 = a0
        var nan = SIMD16<Int32>()
        @inline(__always)
        func step(_ acc: inout SIMD16<Float>, _ x: SIMD16<Float>) {
            acc.replace(with: x, where: isMax ? x .> acc : x .< acc)
            nan |= unsafeBitCast(x .!= x, to: SIMD16<Int32>.self)
        }
        var i = 0
        while i + 64 <= count {
            step(&a0, load(p + i))
            step(&a1, load(p + i + 16))
            step(&a2, load(p + i + 32))
            step(&a3, load(p + i + 48))
            i += 64
        }
        while i + 16 <= count {
            step(&a0, load(p + i))
            i += 16
        }
        if nan != SIMD16<Int32>() { return .nan }
        step(&a0, a1)
        step(&a2, a3)
        step(&a0, a2)
        var result = start
        for lane in 0..<16 {
            let x = a0[lane]
            if isMax ? x > result : x < result { result = x }
        }
        while i < count {
            let x = p[i]
            if x.isNaN { return x }
            if isMax ? x > result : x < result { result = x }
            i += 1
        }
        return result
    }

    /// The extreme value of `p[0..<count]` (NaN if any) and the first index holding it.
    ///
    /// - Precondition: `count > 0`.
    @inline(__always)
    static func argExtremum(_ p: UnsafePointer<Float>, count: Int, isMax: Bool) -> (Float, Int) {
        let value = extremum(p, count: count, isMax: isMax)
        // Second pass: the first position equal to the extreme (or the first NaN).
        let target = SIMD16<Float>(repeating: value)
        var i = 0
        if value.isNaN {
            while i + 16 <= count {
                let x = load(p + i)
                if any(x .!= x) { break }
                i += 16
            }
            while i < count && !p[i].isNaN { i += 1 }
        } else {
            while i + 16 <= count {
                if any(load(p + i) .== target) { break }
                i += 16
            }
            while i < count && p[i] != value { i += 1 }
        }
        return (value, Swift.min(i, count - 1))
    }

    /// `acc[j] += p[j]` for `j` in `0..<count`.
    static func addRow(_ acc: UnsafeMutablePointer<Float>, _ p: UnsafePointer<Float>, count: Int) {
        var j = 0
        while j + 16 <= count {
            store(load(acc + j) + load(p + j), acc + j)
            j += 16
        }
        while j < count {
            acc[j] += p[j]
            j += 1
        }
    }

    /// `acc[j] *= p[j]` for `j` in `0..<count`.
    static func multiplyRow(_ acc: UnsafeMutablePointer<Float>, _ p: UnsafePointer<Float>, count: Int) {
        var j = 0
        while j + 16 <= count {
            store(load(acc + j) * load(p + j), acc + j)
            j += 16
        }
        while j < count {
            acc[j] *= p[j]
            j += 1
        }
    }

    /// The NaN-propagating column-wise max (or min) of a row into `acc`.
    @inline(__always)
    static func extremumRow(_ acc: UnsafeMutablePointer<Float>, _ p: UnsafePointer<Float>, count: Int, isMax: Bool) {
        if SIMDMath.hasAVX2FMA {
            tessera_extremum_row_f32_avx2(isMax ? 1 : 0, acc, p, count)
            return
        }
        var j = 0
        while j + 16 <= count {
            store(replacing(load(acc + j), load(p + j), isMax: isMax), acc + j)
            j += 16
        }
        while j < count {
            let x = p[j]
            if (isMax ? x > acc[j] : x < acc[j]) || x.isNaN { acc[j] = x }
            j += 1
        }
    }
}
