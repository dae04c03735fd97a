import TesseraGraph
import TesseraKernels

extension MLTensor {
    /// Returns the 2-D convolution (cross-correlation, as PyTorch's `conv2d`) of an
    /// `[N, C_in, H, W]` input with a `[C_out, C_in / groups, kH, kW]` weight, plus an
    /// optional `[C_out]` bias: `[N, C_out, H_out, W_out]` with
    /// `H_out = (H + top + bottom - dilation·(kH - 1) - 1) / stride + 1` (and so for `W`).
    ///
    /// **Tessera package API** for the MIL lowering (Core ML's `MLTensor` has no
    /// convolution). Float32 only. A `max(y, lower)`/`min(·, upper)` or residual `+` applied
    /// to the result fuses into the convolution's epilogue.
    ///
    /// ```swift
    /// let y = x.convolved2D(weight: w, bias: b, padding: (1, 1, 1, 1))   // 3 × 3 "same"
    /// ```
    ///
    /// - Precondition: Float32 tensors of ranks 4 and 4 (and a bias of `C_out` values); the
    ///   groups divide both channel counts; the weight has `C_in / groups` input channels;
    ///   strides, dilations and groups positive; padding non-negative; the dilated kernel fits
    ///   the padded input (`[conv2d] …`; inside ``withShapeChecks(_:)`` the error is recorded).
    package func convolved2D(
        weight: MLTensor, bias: MLTensor? = nil, strides: (height: Int, width: Int) = (1, 1),
        dilations: (height: Int, width: Int) = (1, 1),
        padding: (top: Int, bottom: Int, left: Int, right: Int) = (0, 0, 0, 0), groups: Int = 1
    ) -> MLTensor {
        let parameters = Conv2DParameters(strides: strides, dilations: dilations, padding: padding, groups: groups)
        return MLTensor(.conv2d(parameters), [self, weight] + (bias.map { [$0] } ?? []))
    }
}
