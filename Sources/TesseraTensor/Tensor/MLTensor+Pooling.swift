import TesseraGraph
import TesseraKernels

extension MLTensor {
    /// Returns the 2-D max or average pooling of an `[N, C, H, W]` Float32 input:
    /// `[N, C, H_out, W_out]` with `H_out = (H + top + bottom - kH) / stride + 1` (rounded up
    /// with `ceilMode`, as PyTorch's `ceil_mode`).
    ///
    /// **Tessera package API** for the MIL lowering (Core ML's `MLTensor` has no pooling).
    /// An average counts the padded positions when `countIncludePad` (PyTorch's
    /// `count_include_pad`); a maximum ignores them.
    ///
    /// ```swift
    /// let y = x.pooled2D(.maximum, kernel: (2, 2), strides: (2, 2))   // halves H and W
    /// ```
    ///
    /// - Precondition: A Float32 tensor of rank 4; kernel and strides positive; padding
    ///   non-negative; the window fits the padded input (`[maxPool2d] …`; inside
    ///   ``withShapeChecks(_:)`` the error is recorded).
    package func pooled2D(
        _ reduction: PoolingReduction, kernel: (height: Int, width: Int), strides: (height: Int, width: Int),
        padding: (top: Int, bottom: Int, left: Int, right: Int) = (0, 0, 0, 0), ceilMode: Bool = false
    ) -> MLTensor {
        let parameters = Pool2DParameters(kernel: kernel, strides: strides, padding: padding, ceilMode: ceilMode)
        switch reduction {
        case .maximum: return MLTensor(.maxPool2d(parameters), [self])
        case .average(let countIncludePad):
            return MLTensor(.averagePool2d(parameters, countIncludePad: countIncludePad), [self])
        }
    }

    /// What ``pooled2D(_:kernel:strides:padding:ceilMode:)`` computes over each window.
    package enum PoolingReduction: Sendable, Hashable {
        /// The largest element.
        case maximum
        /// The mean; padded positions count as zeros when `countIncludePad`.
        case average(countIncludePad: Bool)
    }
}
