/// A constant convolution weight in the form its kernel consumes, prepared once
/// (``PreparedWeights``) and passed to
/// ``ConvolutionKernels/conv2d(input:inputShape:weights:weightShape:bias:output:parameters:residual:clamp:packedWeights:winogradFilter:)``.
package enum PreparedConvolutionWeight: Sendable {
    /// `[O, C·kH·kW]` in the packed micro-kernel's panels (the pointwise and im2col paths).
    case packed(PackedGEMMOperand)
    /// The Winograd-transformed filter (the Winograd path).
    case winograd(WinogradFilter)

    /// The packed panels, if this is that form.
    package var packed: PackedGEMMOperand? {
        if case .packed(let operand) = self { return operand }
        return nil
    }

    /// The Winograd-transformed filter, if this is that form.
    package var winograd: WinogradFilter? {
        if case .winograd(let filter) = self { return filter }
        return nil
    }
}
