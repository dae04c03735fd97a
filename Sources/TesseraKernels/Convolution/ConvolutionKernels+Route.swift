/// The kernel a convolution runs on, chosen once from its geometry
/// (``ConvolutionKernels/route(inputShape:weightShape:parameters:)``). The dispatch in
/// ``ConvolutionKernels/conv2d(input:inputShape:weights:weightShape:bias:output:parameters:residual:clamp:packedWeights:winogradFilter:)``,
/// the weight a graph prepares once for it and the name profiles give it all read this one
/// value, so they cannot disagree.
///
/// ```swift
/// if case .winograd(let tile) = ConvolutionKernels.route(inputShape: x, weightShape: w, parameters: p) { … }
/// ```
package enum ConvolutionRoute: Equatable, Sendable {
    /// Winograd F(`tile`×`tile`, 3×3) (``WinogradConvolution``): 3×3, stride 1, dilation 1,
    /// one group, 16 or more channels in and out, AVX2 + FMA.
    case winograd(tile: Int)
    /// The depthwise kernel (`groups == C > 1`, ``DepthwiseConvolution``).
    case depthwise
    /// 1×1, stride 1, unpadded, one group, on Tessera's packed micro-kernel (AVX-512).
    case packedPointwise
    /// An image model's first convolution (one group, at most 4 input channels, no dilation,
    /// horizontal stride 1 or 2, 16 or more output columns): the packed micro-kernel reading
    /// the input rows in place, no im2col (``ConvolutionKernels/packedRowsConv(_:input:packed:output:epilogue:)``; AVX-512).
    case packedRows
    /// Any other one-group convolution: im2col into the packed micro-kernel (AVX-512).
    case packedIm2col
    /// 1×1, stride 1, unpadded, by OpenBLAS `sgemm` over column tiles (no AVX-512, or groups).
    case blasPointwise
    /// im2col + OpenBLAS `sgemm` (no AVX-512, or groups).
    case blasIm2col

    /// The Winograd output tile side (4 or 2) of a ``winograd(tile:)`` route; `nil` for the others.
    package var winogradTile: Int? {
        if case .winograd(let tile) = self { return tile }
        return nil
    }

    /// Whether the kernel reads the weight as packed micro-kernel panels (``PackedGEMMOperand``).
    package var usesPackedPanels: Bool { self == .packedPointwise || self == .packedIm2col || self == .packedRows }

    /// The route's name in profiles (`tessera plan MODEL --measure` groups measured time by it).
    package var name: String {
        switch self {
        case .winograd(let tile): "Winograd F(\(tile),3) conv"
        case .depthwise: "depthwise conv"
        case .packedPointwise: "packed pointwise conv"
        case .packedRows: "packed direct conv (input rows in place)"
        case .packedIm2col: "packed im2col conv"
        case .blasPointwise: "OpenBLAS pointwise conv (sgemm)"
        case .blasIm2col: "OpenBLAS im2col conv (sgemm)"
        }
    }
}

extension ConvolutionKernels {
    /// The route a convolution of these shapes takes on this CPU (see ``ConvolutionRoute``).
    ///
    /// - Precondition: The configuration is valid (see
    ///   ``Conv2DParameters/outputShape(inputShape:weightShape:)``).
    package static func route(inputShape: [Int], weightShape: [Int], parameters: Conv2DParameters) -> ConvolutionRoute {
        let outputShape = parameters.outputShape(inputShape: inputShape, weightShape: weightShape)
        return route(ConvGeometry(input: inputShape, weight: weightShape, output: outputShape, parameters: parameters))
    }

    /// The route of a convolution of geometry `g`: Winograd where it wins, else by kind
    /// (depthwise, pointwise, im2col — or, for an image model's first layer, the input rows in
    /// place, ``takesPackedRows(_:)``) on the packed micro-kernel where it is preferred
    /// (``usesPackedGEMM(_:)``), else on OpenBLAS.
    static func route(_ g: ConvGeometry) -> ConvolutionRoute {
        if let tile = WinogradConvolution.tile(g) { return .winograd(tile: tile) }
        let kind = path(channels: g.c, kernelHeight: g.kh, kernelWidth: g.kw, parameters: g.parameters)
        if usesPackedGEMM(g) {
            if kind == .pointwise { return .packedPointwise }
            return takesPackedRows(g) ? .packedRows : .packedIm2col
        }
        switch kind {
        case .depthwise: return .depthwise
        case .pointwise: return .blasPointwise
        case .im2col: return .blasIm2col
        }
    }
}
