import CTesseraSIMD

/// The per-row statistics of contiguous `Float` rows a row-fused step computes itself, a row at
/// a time while the row is in the core's L1 cache: the sum of a row and the sum of its squared
/// deviations from a per-row centre (a variance's `Σ (x - mean)²`, without writing the squares
/// out). Each does the additions of ``ReductionKernels/reduce(_:input:layout:type:axes:output:outputType:)``
/// over the row in the same order, so the results are bit-identical to that reduction of the
/// row (or of the squares written out).
package enum RowMoments {
    /// `Σ row[j]` for `j < count`.
    @inline(__always)
    package static func sum(_ row: UnsafePointer<Float>, count: Int) -> Float {
        FloatReduction.sum(row, count: count)
    }

    /// `Σ (row[j] - center)²` for `j < count`: each term is `d = row[j] - center`, then `d * d`
    /// (two rounded operations, as a fused program computing `(x - m) * (x - m)` gives).
    @inline(__always)
    package static func centeredSquareSum(_ row: UnsafePointer<Float>, count: Int, center: Float) -> Float {
        if count >= 64 && SIMDMath.hasAVX2FMA { return tessera_centered_square_sum_f32_vector(row, count, center) }
        return portableCenteredSquareSum(row, count: count, center: center)
    }

    /// ``centeredSquareSum(_:count:center:)`` in Swift `SIMD16` code (any CPU; the C kernel's
    /// reference), with ``FloatReduction/portableSum(_:count:)``'s accumulators and order.
    static func portableCenteredSquareSum(_ p: UnsafePointer<Float>, count: Int, center: Float) -> Float {
        @inline(__always) func square(_ i: Int) -> SIMD16<Float> {
            let d = FloatReduction.load(p + i) - center
            return d * d
        }
        var i = 0
        var a0 = SIMD16<Float>()
        if count >= 16 {
            var a1 = SIMD16<Float>()
            var a2 = SIMD16<Float>()
            var a3 = SIMD16<Float>()
            while i + 64 <= count {
                a0 += square(i)
                a1 += square(i + 16)
                a2 += square(i + 32)
                a3 += square(i + 48)
                i += 64
            }
            while i + 16 <= count {
                a0 += square(i)
                i += 16
            }
            a0 = (a0 + a1) + (a2 + a3)
        }
        var tail: Float = 0
        while i < count {
            let d = p[i] - center
            tail += d * d
            i += 1
        }
        return count < 16 ? tail : FloatReduction.horizontalSum(a0) + tail
    }

    /// A row's mean from its sum, as a `mean` reduction finishes it: the division in `Double`,
    /// rounded once.
    @inline(__always)
    package static func mean(sum: Float, count: Int) -> Float {
        Float(Double(sum) / Double(count))
    }
}
