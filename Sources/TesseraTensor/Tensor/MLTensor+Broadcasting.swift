import TesseraGraph
import TesseraKernels

extension MLTensor {
    /// Returns the tensor broadcast to `shape` (NumPy's rules; a view, no copy).
    ///
    /// **Tessera package API** for the MIL lowering (`fill`, `fill_like`).
    ///
    /// ```swift
    /// MLTensor(0.5 as Float).broadcast(to: [2, 3])   // 2 × 3 of 0.5, one element stored
    /// ```
    ///
    /// - Precondition: The tensor broadcasts to `shape` (`[broadcast] …`).
    package func broadcast(to shape: [Int]) -> MLTensor {
        shape == self.shape ? self : MLTensor(.broadcast(shape), [self])
    }

    /// Returns `mask ? a : b` element by element, all three broadcasting to one shape (MIL's
    /// and NumPy's `where`).
    ///
    /// **Tessera package API.** The public ``replacing(with:where:)`` keeps the tensor's own
    /// shape; MIL's `select` broadcasts every operand.
    ///
    /// ```swift
    /// MLTensor.selecting(x .> 0, x, MLTensor(0 as Float))   // relu
    /// ```
    ///
    /// - Precondition: `mask` is `Bool`; `a` and `b` have one scalar type; the three shapes
    ///   broadcast (`[select] …`).
    package static func selecting(_ mask: MLTensor, _ a: MLTensor, _ b: MLTensor) -> MLTensor {
        MLTensor(.select, [mask, a, b])
    }
}
