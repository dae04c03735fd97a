/// An image model's first convolution as a ``DepthwiseBlock``'s first stage: a few input
/// channels and a `kH × kW` kernel, run on the packed micro-kernel's direct path
/// (``ConvolutionRoute/packedRows``: the input rows multiplied in place) a band of its output
/// rows at a time, into the block's scratch rows. MobileNetV2's `[1, 3, 224, 224]` → 32 channels
/// 3 × 3 stride 2, whose 1.6 MB output the first depthwise convolution reads: fused, it is never
/// written to memory.
package struct DepthwiseBlockDirect {
    /// The contiguous weight `[O, C, kH, kW]`.
    package var weights: UnsafePointer<Float>
    package var weightShape: [Int]
    package var parameters: Conv2DParameters
    /// The weight in the micro-kernel's panels (``PreparedWeights``), or `nil` to pack it per call.
    package var packed: PackedGEMMOperand?
    /// `O` values, or `nil`.
    package var bias: UnsafePointer<Float>?
    /// Applied to each output after the bias.
    package var clamp: ConvolutionClamp

    package init(
        weights: UnsafePointer<Float>, weightShape: [Int], parameters: Conv2DParameters, packed: PackedGEMMOperand?,
        bias: UnsafePointer<Float>?, clamp: ConvolutionClamp
    ) {
        self.weights = weights
        self.weightShape = weightShape
        self.parameters = parameters
        self.packed = packed
        self.bias = bias
        self.clamp = clamp
    }

    /// Whether a first stage of these shapes runs inside a block: the convolution takes the
    /// direct path (``ConvolutionKernels/takesPackedRows(_:)``), which the micro-kernel runs a
    /// row at a time.
    ///
    /// ```swift
    /// DepthwiseBlockDirect.fuses(
    ///     inputShape: [1, 3, 224, 224], weightShape: [32, 3, 3, 3],
    ///     parameters: Conv2DParameters(strides: (2, 2), padding: (1, 1, 1, 1)))  // true with AVX-512
    /// ```
    package static func fuses(inputShape: [Int], weightShape: [Int], parameters: Conv2DParameters) -> Bool {
        guard inputShape.count == 4, weightShape.count == 4, weightShape[1] == inputShape[1],
            (try? parameters.checkedOutputShape(inputShape: inputShape, weightShape: weightShape)) != nil
        else { return false }
        return ConvolutionKernels.route(inputShape: inputShape, weightShape: weightShape, parameters: parameters)
            == .packedRows
    }
}

extension DepthwiseBlock {
    /// A first stage's input rows split into their column phases for every image, and what a
    /// band needs to point the micro-kernel at them (see ``ConvolutionKernels/packedRowsConv(_:input:packed:output:epilogue:)``):
    /// made once per call, before the bands.
    struct DirectRows {
        let geometry: ConvGeometry
        let split: ConvolutionKernels.RowPhases
        let panels: PackedGEMMOperand
        let buffer: AlignedBuffer
        let bias: UnsafePointer<Float>?
        let clamp: ConvolutionClamp

        var planeFloats: Int { split.planeFloats(geometry) }
        var patch: Int { geometry.patchSize }
        var planes: UnsafeMutablePointer<Float> { buffer.typedPointer(Float.self) }
        /// One row of zeros, for patch rows above and below the image.
        var zeros: UnsafeMutablePointer<Float> { planes + geometry.n * geometry.c * planeFloats }

        /// Splits every image's input rows into phases (in parallel).
        init(_ stage: DepthwiseBlockDirect, input: UnsafePointer<Float>, inputShape: [Int]) {
            let outputShape = stage.parameters.outputShape(inputShape: inputShape, weightShape: stage.weightShape)
            let g = ConvGeometry(
                input: inputShape, weight: stage.weightShape, output: outputShape, parameters: stage.parameters)
            geometry = g
            split = ConvolutionKernels.RowPhases(g)
            panels = ConvolutionKernels.weightPanels(g, weights: stage.weights, prepared: stage.packed)
            bias = stage.bias
            clamp = stage.clamp
            let planeFloats = split.planeFloats(g)
            buffer = GEMMKernels.temporary(Float.self, count: g.n * g.c * planeFloats + split.width)
            let planes = buffer.typedPointer(Float.self)
            (planes + g.n * g.c * planeFloats).initialize(repeating: 0, count: split.width)
            // The images' channel planes follow one another: one split over all of them.
            split.split(g, channels: g.n * g.c, input: input, planes: planes)
        }

        /// Computes output rows `[first, end)` of `image` (every channel, bias and clamp) into
        /// `target`, channel `o`'s row `first + t` at `target + o · ldc + t · OW`. `pointers` has
        /// room for `(end - first) · patch` row pointers.
        func rows(
            image: Int, _ first: Int, _ end: Int, into target: UnsafeMutablePointer<Float>, ldc: Int,
            pointers: UnsafeMutablePointer<UnsafePointer<Float>?>
        ) {
            let g = geometry
            split.point(
                g, outputRows: first..<end, planes: planes + image * g.c * planeFloats, zeros: zeros, pointers: pointers
            )
            ConvolutionKernels.packedRowsProduct(
                panels, g, pointers: pointers, rows: end - first, c: target, ldc: ldc, bias: bias, residual: nil,
                clamp: clamp)
        }
    }
}
