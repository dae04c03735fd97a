/// An activation of a recurrent layer's gates, cell or output: the functions Core ML's
/// recurrent ops accept (MIL `lstm` / `gru` / `rnn` and the NeuralNetwork recurrent layers'
/// `ActivationParams`).
///
/// Computed in Float32, sixteen lanes at a time (``apply(_:)``); `sigmoid` and `tanh` are
/// within a few ulp of the C library's.
///
/// ```swift
/// let gate = RecurrentActivation.sigmoidHard(alpha: 0.2, beta: 0.5)
/// gate.apply(0)          // 0.5
/// RecurrentActivation(milName: "scaled_tanh")   // .scaledTanh(alpha: 1, beta: 1)
/// ```
package enum RecurrentActivation: Sendable, Hashable, CustomStringConvertible {
    /// `1 / (1 + e^-x)`.
    case sigmoid
    /// `tanh(x)`.
    case tanh
    /// `max(x, 0)`.
    case relu
    /// `alpha · x + beta`.
    case linear(alpha: Float, beta: Float)
    /// `alpha · tanh(beta · x)`.
    case scaledTanh(alpha: Float, beta: Float)
    /// `min(max(alpha · x + beta, 0), 1)`.
    case sigmoidHard(alpha: Float, beta: Float)

    /// The activation a MIL recurrent op names (`sigmoid`, `tanh`, `relu`, `linear`,
    /// `scaled_tanh`, `hard_sigmoid` or `sigmoid_hard`, any case), with the parameters MIL
    /// uses for them (coremltools' reference: `scaled_tanh` is `tanh`, `linear` the identity,
    /// `hard_sigmoid` `min(max(0.2x + 0.5, 0), 1)`); `nil` for any other name.
    package init?(milName: String) {
        switch milName.lowercased() {
        case "sigmoid": self = .sigmoid
        case "tanh": self = .tanh
        case "relu": self = .relu
        case "linear": self = .linear(alpha: 1, beta: 0)
        case "scaled_tanh": self = .scaledTanh(alpha: 1, beta: 1)
        case "hard_sigmoid", "sigmoid_hard": self = .sigmoidHard(alpha: 0.2, beta: 0.5)
        default: return nil
        }
    }

    package var description: String {
        switch self {
        case .sigmoid: "sigmoid"
        case .tanh: "tanh"
        case .relu: "relu"
        case .linear(let a, let b): "linear(\(a), \(b))"
        case .scaledTanh(let a, let b): "scaledTanh(\(a), \(b))"
        case .sigmoidHard(let a, let b): "sigmoidHard(\(a), \(b))"
        }
    }

    /// The activation of each lane.
    @inlinable
    @inline(__always)
    package func apply(_ x: SIMD16<Float>) -> SIMD16<Float> {
        switch self {
        case .sigmoid: return RecurrentActivation.sigmoid(x)
        case .tanh: return RecurrentActivation.tanh(x)
        case .relu: return x.replacing(with: 0, where: x .< 0)
        case .linear(let a, let b): return x * a + b
        case .scaledTanh(let a, let b): return RecurrentActivation.tanh(x * b) * a
        case .sigmoidHard(let a, let b):
            let y = x * a + b
            return y.clamped(lowerBound: SIMD16(repeating: 0), upperBound: SIMD16(repeating: 1))
        }
    }

    /// The activation of one value (the lanes of ``apply(_:)-(SIMD16<Float>)`` exactly).
    @inlinable
    package func apply(_ x: Float) -> Float { apply(SIMD16<Float>(repeating: x))[0] }

    /// `1 / (1 + e^-x)` per lane; 0 and 1 at the extremes, never NaN for finite input.
    @inlinable
    @inline(__always)
    package static func sigmoid(_ x: SIMD16<Float>) -> SIMD16<Float> {
        1 / (1 + SIMDMath.exp(-x))
    }

    /// `tanh(x)` per lane: Cephes' odd polynomial below |x| = 0.625 (no cancellation near 0),
    /// `1 - 2 / (e^2|x| + 1)` with the sign restored above.
    @inlinable
    @inline(__always)
    package static func tanh(_ x: SIMD16<Float>) -> SIMD16<Float> {
        let magnitude = x.replacing(with: -x, where: x .< 0)
        let z = x * x
        var p = SIMD16<Float>(repeating: -5.70498872745e-3)
        p = p * z + 2.06390887954e-2
        p = p * z - 5.37397155531e-2
        p = p * z + 1.33314422036e-1
        p = p * z - 3.33332819422e-1
        let small = p * z * x + x
        var large = 1 - 2 / (SIMDMath.exp(magnitude + magnitude) + 1)
        large.replace(with: -large, where: x .< 0)
        var result = small.replacing(with: large, where: magnitude .>= 0.625)
        result.replace(with: x, where: x .!= x)
        return result
    }
}
