extension ConvolutionKernels {
    /// Floats of one task's block of output rows in ``conv2dMeans(input:inputShape:weights:weightShape:bias:residual:clamp:parameters:packedWeights:output:)``:
    /// 32 KiB, so the block is still in the core's L1 or L2 cache when its means are taken.
    static let meanBlockFloats = 8 << 10

    /// Whether ``conv2dMeans(input:inputShape:weights:weightShape:bias:residual:clamp:parameters:packedWeights:output:)``
    /// runs a convolution of these shapes: one the packed micro-kernel computes as a pointwise
    /// product (``ConvolutionRoute/packedPointwise``) with at least one output position. The
    /// shapes must be a valid convolution's, as ``Conv2DParameters/outputShape(inputShape:weightShape:)``
    /// checks them, or have no input positions.
    ///
    /// ```swift
    /// ConvolutionKernels.runsWithMean(
    ///     inputShape: [1, 320, 7, 7], weightShape: [1280, 320, 1, 1], parameters: Conv2DParameters())
    /// // true where the AVX-512 micro-kernel runs
    /// ```
    package static func runsWithMean(inputShape: [Int], weightShape: [Int], parameters: Conv2DParameters) -> Bool {
        guard inputShape.count == 4, weightShape.count == 4, parameters.groups == 1,
            inputShape[2] * inputShape[3] > 0
        else { return false }
        // A pointwise route keeps the input's positions: the output has as many.
        return route(inputShape: inputShape, weightShape: weightShape, parameters: parameters) == .packedPointwise
    }

    /// A convolution, its epilogue and the mean over its output positions — a global average
    /// pool — in one parallel loop: `output[n, o] = mean over (y, x) of
    /// clamp(conv(input)[n, o, y, x] + bias[o] + residual[n, o, y, x])`. Each task computes a
    /// block of output channels of one image into a cache-sized scratch block and reduces its
    /// rows there, so the convolution's output never goes to memory.
    ///
    /// The convolution's values are the bits ``conv2d(input:inputShape:weights:weightShape:bias:output:parameters:residual:clamp:packedWeights:winogradFilter:)``
    /// gives (the same micro-kernel, each element one FMA chain in channel order whatever its
    /// block), and each mean has the bits of ``ReductionKernels``' mean over the last two axes of
    /// that output (``RowMoments``: the same additions over a contiguous row of `H × W` floats).
    ///
    /// - Parameters:
    ///   - input: Contiguous `[N, C, H, W]`.
    ///   - weights: Contiguous `[O, C, 1, 1]`.
    ///   - bias: `[O]`, or `nil`.
    ///   - residual: Contiguous, the convolution's output shape `[N, O, OH, OW]`, or `nil`.
    ///   - clamp: Applied after the bias and the residual; must have no NaN bound.
    ///   - packedWeights: The weights' panels prepared at load, or `nil` to pack them for this
    ///     call.
    ///   - output: Contiguous `[N, O]` (the pool's `[N, O, 1, 1]`).
    /// - Precondition: ``runsWithMean(inputShape:weightShape:parameters:)`` holds and the clamp
    ///   has no NaN bound. Runs multithreaded: do not call it from inside a `parallelFor` body.
    ///
    /// ```swift
    /// // MobileNetV2's last convolution, ReLU6 and global pool: [1, 320, 7, 7] → [1, 1280]
    /// ConvolutionKernels.conv2dMeans(
    ///     input: x, inputShape: [1, 320, 7, 7], weights: w, weightShape: [1280, 320, 1, 1], bias: b,
    ///     residual: nil, clamp: ConvolutionClamp(lower: 0, upper: 6), parameters: Conv2DParameters(),
    ///     packedWeights: nil, output: pooled)
    /// ```
    package static func conv2dMeans(
        input: UnsafePointer<Float>, inputShape: [Int], weights: UnsafePointer<Float>, weightShape: [Int],
        bias: UnsafePointer<Float>?, residual: UnsafePointer<Float>?, clamp: ConvolutionClamp,
        parameters: Conv2DParameters, packedWeights: PackedGEMMOperand?, output: UnsafeMutablePointer<Float>
    ) {
        kernelPrecondition(
            runsWithMean(inputShape: inputShape, weightShape: weightShape, parameters: parameters)
                && !clamp.hasNaNBound,
            "[conv2d + mean] input \(inputShape), weight \(weightShape), \(parameters): "
                + "not a pointwise convolution on the packed micro-kernel, or a NaN bound")
        let outputShape = parameters.outputShape(inputShape: inputShape, weightShape: weightShape)
        let g = ConvGeometry(input: inputShape, weight: weightShape, output: outputShape, parameters: parameters)
        let positions = g.outputPositions
        if g.n * g.o == 0 { return }
        let packed = weightPanels(g, weights: weights, prepared: packedWeights)
        let rows = meanBlockRows(outputChannels: g.o, positions: positions, budget: KernelThreads.coreBudget)
        let blocks = (g.o + rows - 1) / rows
        let cost = Double(rows * positions * g.c) * 0.025 + Double(rows * positions) * 0.4 + 300
        parallelFor(count: g.n * blocks, cost: .perItem(nanoseconds: cost)) { range in
            ThreadScratch.withFloats(count: rows * positions) { scratch in
                for index in range {
                    let image = index / blocks
                    let first = (index % blocks) * rows
                    let count = Swift.min(rows, g.o - first)
                    PackedGEMM.multiply(
                        packed, firstRow: first, rows: count, columns: positions,
                        b: input + image * g.c * g.h * g.w, ldb: positions, c: scratch, ldc: positions,
                        bias: bias.map { $0 + first },
                        residual: residual.map { $0 + (image * g.o + first) * positions }, residualStride: positions,
                        clamp: clamp)
                    let means = output + image * g.o + first
                    for row in 0..<count {
                        let sum = RowMoments.sum(scratch + row * positions, count: positions)
                        means[row] = RowMoments.mean(sum: sum, count: positions)
                    }
                }
            }
        }
    }

    /// Output channels per task of ``conv2dMeans(input:inputShape:weights:weightShape:bias:residual:clamp:parameters:packedWeights:output:)``:
    /// whole eight-row panels whose `positions` columns fit ``meanBlockFloats``, and no more than
    /// make four tasks per thread (at least one panel).
    ///
    /// ```swift
    /// ConvolutionKernels.meanBlockRows(outputChannels: 1280, positions: 49, budget: 2)  // 160
    /// ```
    static func meanBlockRows(outputChannels: Int, positions: Int, budget: Int) -> Int {
        let panel = PackedGEMMOperand.panelRows
        let fit = meanBlockFloats / Swift.max(1, positions) / panel * panel
        let parts = 4 * Swift.max(1, budget)
        let spread = ((outputChannels + parts - 1) / parts + panel - 1) / panel * panel
        return Swift.max(panel, Swift.min(fit, spread))
    }
}
