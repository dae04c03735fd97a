import CTesseraSIMD

/// An activation a convolution applies to each output value as it writes it:
/// `min(max(x, lower), upper)`, with `min` and `max` the NaN-propagating ``BinaryOp/min`` and
/// ``BinaryOp/max`` and the convolution's value `x` as their left operand — the same bits as
/// running those two element-wise ops on the convolution's result (a NaN result stays NaN,
/// `-0` stays `-0` against a bound of `0`, a NaN bound makes every value that bound).
///
/// An infinite bound changes nothing, so ``none`` is `[-∞, +∞]`, ReLU is `[0, +∞]` and ReLU6
/// is `[0, 6]`.
///
/// ```swift
/// ConvolutionKernels.conv2d(input: x, inputShape: [1, 32, 112, 112], weights: w, weightShape: [32, 1, 3, 3],
///                           bias: b, output: y, parameters: p, clamp: .relu6)
/// ```
package struct ConvolutionClamp: Sendable, Hashable, CustomStringConvertible {
    /// The lower bound (`-infinity` for none).
    package var lower: Float
    /// The upper bound (`+infinity` for none).
    package var upper: Float

    /// A clamp to `[lower, upper]`; the defaults leave values unchanged.
    package init(lower: Float = -.infinity, upper: Float = .infinity) {
        self.lower = lower
        self.upper = upper
    }

    /// No activation.
    package static let none = ConvolutionClamp()
    /// `max(x, 0)`.
    package static let relu = ConvolutionClamp(lower: 0)
    /// `min(max(x, 0), 6)`.
    package static let relu6 = ConvolutionClamp(lower: 0, upper: 6)

    /// Whether the clamp leaves every value unchanged.
    package var isIdentity: Bool { lower == -.infinity && upper == .infinity }

    /// The bounds in words, for plans and trap messages.
    package var description: String { "clamp[\(lower), \(upper)]" }

    /// Whether a bound is NaN, which makes every output that bound (see ``fillNaN(_:count:)``).
    package var hasNaNBound: Bool { lower.isNaN || upper.isNaN }

    /// The bounds for the C kernels, which need bounds that are not NaN: a NaN bound is applied
    /// afterwards by ``fillNaN(_:count:)``.
    var kernelBounds: (lower: Float, upper: Float) {
        hasNaNBound ? (-.infinity, .infinity) : (lower, upper)
    }

    /// Overwrites `count` outputs with the NaN bound: `max(x, NaN)` is that NaN, and
    /// `min(v, NaN)` is the upper NaN whatever `v` is.
    func fillNaN(_ output: UnsafeMutablePointer<Float>, count: Int) {
        output.update(repeating: upper.isNaN ? upper : lower, count: count)
    }

    /// `p[i] = clamp((p[i] + bias) + residual[i])` for `i < count`, without the bias or the
    /// residual when they are `nil`; a NaN bound is left to ``fillNaN(_:count:)``.
    func apply(to p: UnsafeMutablePointer<Float>, count: Int, bias: Float?, residual: UnsafePointer<Float>? = nil) {
        let (lo, hi) = kernelBounds
        if SIMDMath.hasAVX2FMA {
            tessera_conv_epilogue_f32(p, residual, count, bias == nil ? 0 : 1, bias ?? 0, lo, hi)
            return
        }
        for i in 0..<count {
            var v = p[i]
            if let bias { v += bias }
            if let residual { v += residual[i] }
            // The operand order of `maxps(lo, v)` / `minps(hi, v)`, as the C kernels compute.
            v = lo > v ? lo : v
            v = hi < v ? hi : v
            p[i] = v
        }
    }

    /// `c[i, j] = clamp(c[i, j] + add[i · addRowStride + j])` over `rows` rows of `columns`
    /// contiguous floats (without the addition when `add` is `nil`): a product's epilogue when
    /// its kernel did not apply it — `addRowStride` 0 adds one bias per column, `columns` an
    /// output-shaped residual. The same bits as the element-wise `add`, `max` and `min`, the
    /// product's value on the left; a NaN bound makes every value that bound.
    ///
    /// ```swift
    /// ConvolutionClamp.relu.finishRows(y, rows: 128, columns: 1024, adding: bias, addRowStride: 0)
    /// ```
    ///
    /// - Precondition: `c` holds `rows · columns` floats and does not overlap `add`. Runs
    ///   multithreaded: do not call it from a `parallelFor` body.
    package func finishRows(
        _ c: UnsafeMutablePointer<Float>, rows: Int, columns: Int, adding add: UnsafePointer<Float>?,
        addRowStride: Int
    ) {
        if rows == 0 || columns == 0 || (add == nil && isIdentity) { return }
        if hasNaNBound {
            fillNaN(c, count: rows * columns)
            return
        }
        let cost = ParallelCost.perItem(nanoseconds: Double(columns) * 0.3)
        parallelFor(count: rows, cost: cost) { range in
            for i in range {
                apply(to: c + i * columns, count: columns, bias: nil, residual: add.map { $0 + i * addRowStride })
            }
        }
    }
}
