extension ConvolutionKernels {
    /// The name of the kernel path
    /// ``conv2d(input:inputShape:weights:weightShape:bias:output:parameters:residual:clamp:packedWeights:winogradFilter:)``
    /// takes for these shapes, from the same selectors it dispatches on: `Winograd F(4,3)` or
    /// `Winograd F(2,3)` (``WinogradConvolution``), `depthwise`,
    /// `packed pointwise`, `packed im2col` (Tessera's micro-kernel on prepared weight panels),
    /// `OpenBLAS pointwise` or `OpenBLAS im2col` (`sgemm`). For profiles
    /// (`tessera plan MODEL --measure`), which group measured time by path.
    ///
    /// - Precondition: The configuration is valid (see
    ///   ``Conv2DParameters/outputShape(inputShape:weightShape:)``).
    package static func pathName(inputShape: [Int], weightShape: [Int], parameters: Conv2DParameters) -> String {
        let outputShape = parameters.outputShape(inputShape: inputShape, weightShape: weightShape)
        let geometry = ConvGeometry(input: inputShape, weight: weightShape, output: outputShape, parameters: parameters)
        if let tile = WinogradConvolution.tile(geometry) { return "Winograd F(\(tile),3) conv" }
        let kind = path(
            channels: geometry.c, kernelHeight: geometry.kh, kernelWidth: geometry.kw, parameters: parameters)
        switch kind {
        case .depthwise where !usesPackedGEMM(geometry): return "depthwise conv"
        case .pointwise: return usesPackedGEMM(geometry) ? "packed pointwise conv" : "OpenBLAS pointwise conv (sgemm)"
        default: return usesPackedGEMM(geometry) ? "packed im2col conv" : "OpenBLAS im2col conv (sgemm)"
        }
    }
}
