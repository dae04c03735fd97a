import TesseraGraph
import TesseraKernels

// Tessera extensions: Core ML's MLTensor has none of these; projects built on it
// (swift-transformers, WhisperKit, swift-embeddings) hand-write them. Each is one fused
// element-wise program or one kernel.

extension MLTensor {
    /// How ``MLTensor/gelu(approximation:)`` computes the Gaussian CDF.
    ///
    /// **Tessera extension.**
    public enum GELUApproximation: Sendable, Hashable {
        /// `0.5 x (1 + erf(x / √2))` (PyTorch's `approximate="none"`).
        case exact
        /// `0.5 x (1 + tanh(√(2/π) (x + 0.044715 x³)))` (PyTorch's `approximate="tanh"`, GPT-2's).
        case tanh
    }

    /// Returns the logistic sigmoid `1 / (1 + exp(-x))`, element by element.
    ///
    /// **Tessera extension.**
    ///
    /// ```swift
    /// MLTensor([0, 2] as [Float]).sigmoid()   // [0.5, 0.881]
    /// ```
    ///
    /// - Precondition: The scalar type is a floating-point type.
    public func sigmoid() -> MLTensor {
        unary(.sigmoid)
    }

    /// Returns `max(x, 0)`, element by element (NaN stays NaN).
    ///
    /// **Tessera extension.**
    ///
    /// ```swift
    /// MLTensor([-1, 2] as [Float]).relu()   // [0, 2]
    /// ```
    public func relu() -> MLTensor {
        binary(.max, scalarOperand(Int32(0)))
    }

    /// Returns `x * sigmoid(x)` (SiLU, also called swish), element by element.
    ///
    /// **Tessera extension.** One fused pass.
    ///
    /// ```swift
    /// MLTensor([1] as [Float]).silu()   // [0.731]
    /// ```
    ///
    /// - Precondition: The scalar type is a floating-point type.
    public func silu() -> MLTensor {
        self * unary(.sigmoid)
    }

    /// Returns the Gaussian error linear unit, element by element.
    ///
    /// **Tessera extension.** One fused pass.
    ///
    /// ```swift
    /// MLTensor([1] as [Float]).gelu()                      // [0.8413]
    /// MLTensor([1] as [Float]).gelu(approximation: .tanh)  // [0.8412]
    /// ```
    ///
    /// - Parameter approximation: `.exact` (erf) or `.tanh`.
    /// - Precondition: The scalar type is a floating-point type.
    public func gelu(approximation: GELUApproximation = .exact) -> MLTensor {
        switch approximation {
        case .exact:
            return self * 0.5 * ((self * 0.707_106_781_186_547_5).unary(.erf) + 1)
        case .tanh:
            let inner = (self + self * self * self * 0.044715) * 0.797_884_560_802_865_4
            return self * 0.5 * (inner.unary(.tanh) + 1)
        }
    }

    /// Returns the error function, element by element.
    ///
    /// **Tessera extension.** Float32 relative error about 1e-7.
    ///
    /// ```swift
    /// MLTensor([0.5] as [Float]).erf()   // [0.5205]
    /// ```
    ///
    /// - Precondition: The scalar type is a floating-point type.
    public func erf() -> MLTensor {
        unary(.erf)
    }

    /// Returns the logarithm of the softmax along an axis, computed stably as
    /// `x - max - log(sum(exp(x - max)))` by one kernel.
    ///
    /// **Tessera extension.**
    ///
    /// ```swift
    /// MLTensor([1, 2, 3] as [Float]).logSoftmax()   // [-2.408, -1.408, -0.408]
    /// ```
    ///
    /// - Precondition: `axis` is in `-rank..<rank`; the scalar type is a floating-point type.
    public func logSoftmax(alongAxis axis: Int = -1) -> MLTensor {
        guard let axis = normalizedAxis(axis, op: "logSoftmax") else { return placeholder }
        return MLTensor(.logSoftmax(axis: axis), [self])
    }
}
