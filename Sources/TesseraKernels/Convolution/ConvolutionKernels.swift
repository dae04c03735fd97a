/// 2-D convolution over contiguous NCHW Float32 tensors.
///
/// Four paths, chosen from the shapes:
///
/// - **Winograd** (3×3, stride 1, dilation 1, one group, at least 16 channels in and out):
///   ``WinogradConvolution``, F(4×4, 3×3) or F(2×2, 3×3) by the output plane's size;
/// - **depthwise** (`groups == C`, `C > 1`): a direct loop per output plane, each block of an
///   output row summed in a register across the kernel taps, parallel over `N × O` planes;
/// - **pointwise** (1×1 kernel, stride 1, no padding): one GEMM per image and group,
///   `W[O/g, C/g] × X[C/g, H·W]`, reading the input in place;
/// - **im2col + GEMM** otherwise: for each image and group, the input patches are unrolled
///   into a `[C/g·kH·kW, tile]` column buffer (built in parallel over its rows), then
///   `W[O/g, C/g·kH·kW] × cols` lands directly in the NCHW output. The output positions are
///   processed in tiles so the column buffer stays under ``defaultColumnBufferBytes``.
///
/// An optional residual (a tensor of the output's shape, added after the bias: ResNet's and
/// MobileNetV2's skip connections) and an optional ``ConvolutionClamp`` (ReLU, ReLU6, any
/// `[lower, upper]`) are applied as each part of the output is finished — per plane in the
/// depthwise kernel, together with the bias after each tile's GEMM — so they cost no pass of
/// their own over memory.
///
/// ```swift
/// let p = Conv2DParameters(padding: (top: 1, bottom: 1, left: 1, right: 1))
/// ConvolutionKernels.conv2d(input: x, inputShape: [1, 64, 56, 56], weights: w,
///                           weightShape: [64, 64, 3, 3], bias: b, output: y, parameters: p)
/// ```
package enum ConvolutionKernels {
    /// The largest im2col column buffer, in bytes; output positions are tiled to stay below it.
    package static let defaultColumnBufferBytes = 8 << 20

    /// Which algorithm
    /// ``conv2d(input:inputShape:weights:weightShape:bias:output:parameters:residual:clamp:)``
    /// uses for a configuration.
    enum Path: Equatable {
        case depthwise
        case pointwise
        case im2col
    }

    /// The path for an input with `channels` channels and a `kernelHeight × kernelWidth` kernel.
    static func path(channels: Int, kernelHeight: Int, kernelWidth: Int, parameters: Conv2DParameters) -> Path {
        if parameters.groups == channels && channels > 1 { return .depthwise }
        if parameters.isPointwise(kernelHeight: kernelHeight, kernelWidth: kernelWidth) { return .pointwise }
        return .im2col
    }

    /// Convolves a batch of NCHW Float32 images with an OIHW weight, adding an optional bias
    /// and an optional residual and applying an optional clamp.
    ///
    /// Computes, for every image `n`, output channel `o` in group `g = o / (O/groups)` and
    /// output position `(y, x)`:
    /// `out[n, o, y, x] = bias[o] + Σ_{c, i, j} W[o, c, i, j] · in[n, g·C/groups + c, y·sH - padTop + i·dH, x·sW - padLeft + j·dW]`,
    /// with input positions outside the image reading as 0 — PyTorch's `conv2d` (a
    /// cross-correlation, like every deep-learning framework's) — then `+ residual[n, o, y, x]`
    /// and `clamp` applied to it.
    ///
    /// ```swift
    /// // 3×3, stride 2, 2 groups: [2, 4, 9, 9] → [2, 6, 4, 4]
    /// let p = Conv2DParameters(strides: (2, 2), groups: 2)
    /// ConvolutionKernels.conv2d(input: x, inputShape: [2, 4, 9, 9], weights: w, weightShape: [6, 2, 3, 3],
    ///                           bias: nil, output: y, parameters: p)
    /// ```
    ///
    /// - Parameters:
    ///   - input: Contiguous `[N, C, H, W]` input.
    ///   - inputShape: `[N, C, H, W]`.
    ///   - weights: Contiguous `[O, C/groups, kH, kW]` weights.
    ///   - weightShape: `[O, C/groups, kH, kW]`.
    ///   - bias: `O` values added to each output channel, or `nil`.
    ///   - output: Contiguous destination of the shape
    ///     ``Conv2DParameters/outputShape(inputShape:weightShape:)`` returns; must not overlap
    ///     the input.
    ///   - parameters: Strides, dilations, padding and groups.
    ///   - residual: A contiguous tensor of the output's shape added to the output (after the
    ///     bias, before the clamp), or `nil`; must not overlap the output.
    ///   - clamp: The activation applied to each output value (``ConvolutionClamp/none`` by
    ///     default); the same bits as `min(max(out, lower), upper)` run afterwards.
    ///   - packedWeights: The weight already in the micro-kernel's panels (from
    ///     ``PreparedWeights``), or `nil` to pack it in this call when the packed path runs.
    ///   - winogradFilter: The weight already transformed for Winograd (from
    ///     ``PreparedWeights``), or `nil` to transform it in this call when the Winograd path
    ///     (``ConvolutionRoute/winograd(tile:)``) runs.
    /// - Precondition: The configuration is valid (see
    ///   ``Conv2DParameters/outputShape(inputShape:weightShape:)``).
    /// - Note: The im2col path needs a column buffer of at most ``defaultColumnBufferBytes``
    ///   (more only if a single output position's patch is larger). It comes from
    ///   ``BufferPool/shared`` so repeated calls reuse it; if the pool's memory limit refuses,
    ///   the kernel allocates it outside the pool instead of failing, since the amount is
    ///   bounded. Runs multithreaded (OpenBLAS and ``parallelFor(count:cost:alignment:_:)``):
    ///   do not call it from inside a `parallelFor` body.
    package static func conv2d(
        input: UnsafePointer<Float>, inputShape: [Int], weights: UnsafePointer<Float>, weightShape: [Int],
        bias: UnsafePointer<Float>?, output: UnsafeMutablePointer<Float>, parameters: Conv2DParameters,
        residual: UnsafePointer<Float>? = nil, clamp: ConvolutionClamp = .none,
        packedWeights: PackedGEMMOperand? = nil, winogradFilter: WinogradFilter? = nil
    ) {
        conv2d(
            input: input, inputShape: inputShape, weights: weights, weightShape: weightShape, bias: bias,
            output: output, parameters: parameters, residual: residual, clamp: clamp,
            columnBufferBytes: defaultColumnBufferBytes, packedWeights: packedWeights, winogradFilter: winogradFilter)
    }

    /// ``conv2d(input:inputShape:weights:weightShape:bias:output:parameters:residual:clamp:)``
    /// with an explicit column-buffer budget, so tests can force the tiled im2col path on small
    /// data.
    static func conv2d(
        input: UnsafePointer<Float>, inputShape: [Int], weights: UnsafePointer<Float>, weightShape: [Int],
        bias: UnsafePointer<Float>?, output: UnsafeMutablePointer<Float>, parameters: Conv2DParameters,
        residual: UnsafePointer<Float>? = nil, clamp: ConvolutionClamp = .none, columnBufferBytes: Int,
        packedWeights: PackedGEMMOperand? = nil, winogradFilter: WinogradFilter? = nil
    ) {
        let outputShape = parameters.outputShape(inputShape: inputShape, weightShape: weightShape)
        let geometry = ConvGeometry(input: inputShape, weight: weightShape, output: outputShape, parameters: parameters)
        if geometry.outputCount == 0 { return }
        let epilogue = ConvEpilogue(bias: bias, residual: residual, clamp: clamp, positions: geometry.outputPositions)
        switch route(geometry) {
        case .winograd(let tile):
            let filter = WinogradConvolution.filter(geometry, tile: tile, weights: weights, prepared: winogradFilter)
            WinogradConvolution.run(geometry, input: input, filter: filter, output: output, epilogue: epilogue)
        case .packedPointwise:
            let packed = weightPanels(geometry, weights: weights, prepared: packedWeights)
            packedPointwise(geometry, input: input, packed: packed, output: output, epilogue: epilogue)
        case .packedRows:
            let packed = weightPanels(geometry, weights: weights, prepared: packedWeights)
            packedRowsConv(geometry, input: input, packed: packed, output: output, epilogue: epilogue)
        case .packedIm2col:
            let packed = weightPanels(geometry, weights: weights, prepared: packedWeights)
            packedIm2colGEMM(
                geometry, input: input, packed: packed, output: output, epilogue: epilogue,
                columnBufferBytes: columnBufferBytes)
        case .depthwise:
            DepthwiseConvolution.run(geometry, input: input, weights: weights, output: output, epilogue: epilogue)
        case .blasPointwise:
            pointwise(geometry, input: input, weights: weights, output: output, epilogue: epilogue)
        case .blasIm2col:
            im2colGEMM(
                geometry, input: input, weights: weights, output: output, epilogue: epilogue,
                columnBufferBytes: columnBufferBytes)
        }
        if clamp.hasNaNBound { clamp.fillNaN(output, count: geometry.outputCount) }
    }

    /// The output bytes of one pointwise tile: small enough that the tile is still in the core's
    /// L2 cache when its epilogue (bias, residual, clamp) runs right after its GEMM.
    static let pointwiseTileBytes = 128 << 10

    /// 1×1, stride 1, unpadded: `out[n, group] = W[group] × in[n, group]`. Each image and group
    /// is split into column tiles of about ``pointwiseTileBytes`` of output — or, when the plane
    /// is one tile, into blocks of output channels, so small planes (7×7) use every core — run
    /// in parallel: one single-threaded GEMM per tile, then the epilogue over the tile while it
    /// is in cache.
    private static func pointwise(
        _ g: ConvGeometry, input: UnsafePointer<Float>, weights: UnsafePointer<Float>,
        output: UnsafeMutablePointer<Float>, epilogue: ConvEpilogue
    ) {
        let positions = g.outputPositions
        let tile = pointwiseTileColumns(outputChannels: g.og, positions: positions)
        let tiles = (positions + tile - 1) / tile
        let rows = tiles > 1 ? g.og : pointwiseBlockRows(outputChannels: g.og, budget: KernelThreads.coreBudget)
        let rowBlocks = (g.og + rows - 1) / rows
        let cost = ParallelCost.perItem(nanoseconds: Double(rows * g.cg * tile) * 0.02 + 500)
        for image in 0..<g.n {
            for group in 0..<g.parameters.groups {
                let b = input + (image * g.c + group * g.cg) * g.h * g.w
                parallelFor(count: tiles * rowBlocks, cost: cost) { range in
                    for index in range {
                        let start = (index % tiles) * tile
                        let width = Swift.min(tile, positions - start)
                        let firstRow = (index / tiles) * rows
                        let height = Swift.min(rows, g.og - firstRow)
                        let firstPlane = image * g.o + group * g.og + firstRow
                        GEMMKernels.sgemm(
                            transposeA: false, transposeB: false, m: height, n: width, k: g.cg, alpha: 1,
                            a: weights + (group * g.og + firstRow) * g.cg, lda: g.cg, b: b + start, ldb: positions,
                            beta: 0, c: output + firstPlane * positions + start, ldc: positions)
                        if epilogue.isIdentity { continue }
                        for plane in firstPlane..<(firstPlane + height) {
                            epilogue.apply(output, plane: plane, channel: plane % g.o, columns: start..<(start + width))
                        }
                    }
                }
            }
        }
    }

    /// Output channels per block when a pointwise plane is a single tile: a multiple of 16 that
    /// gives each core about two blocks.
    static func pointwiseBlockRows(outputChannels: Int, budget: Int) -> Int {
        let blocks = Swift.max(1, 2 * budget)
        return Swift.max(16, ((outputChannels + blocks - 1) / blocks + 15) / 16 * 16)
    }

    /// Columns per pointwise tile: about ``pointwiseTileBytes`` of output, a multiple of 16, at
    /// least 64, and at most half the positions when that leaves two tiles of 64 or more (so
    /// both cores of a small plane have work).
    static func pointwiseTileColumns(outputChannels: Int, positions: Int) -> Int {
        let bytesPerColumn = Swift.max(1, outputChannels) * MemoryLayout<Float>.stride
        var tile = Swift.max(64, pointwiseTileBytes / bytesPerColumn / 16 * 16)
        let half = ((positions + 1) / 2 + 15) / 16 * 16
        if half >= 64 { tile = Swift.min(tile, half) }
        return Swift.min(tile, Swift.max(1, positions))
    }

    /// The general path: tiled im2col into a pooled buffer, then one GEMM per tile, then the
    /// epilogue over the tile's columns of each output plane.
    private static func im2colGEMM(
        _ g: ConvGeometry, input: UnsafePointer<Float>, weights: UnsafePointer<Float>,
        output: UnsafeMutablePointer<Float>, epilogue: ConvEpilogue, columnBufferBytes: Int
    ) {
        let positions = g.outputPositions
        let patch = g.patchSize
        let tile = Swift.max(1, Swift.min(positions, columnBufferBytes / MemoryLayout<Float>.stride / patch))
        let buffer = GEMMKernels.temporary(Float.self, count: patch * tile)
        let columns = buffer.typedPointer(Float.self)
        for image in 0..<g.n {
            for group in 0..<g.parameters.groups {
                let groupInput = input + (image * g.c + group * g.cg) * g.h * g.w
                let firstPlane = image * g.o + group * g.og
                var start = 0
                while start < positions {
                    let end = Swift.min(positions, start + tile)
                    Im2Col.fill(columns, from: groupInput, geometry: g, positions: start..<end)
                    GEMMKernels.sgemm(
                        transposeA: false, transposeB: false, m: g.og, n: end - start, k: patch, alpha: 1,
                        a: weights + group * g.og * patch, lda: patch, b: columns, ldb: end - start, beta: 0,
                        c: output + firstPlane * positions + start, ldc: positions)
                    if !epilogue.isIdentity {
                        let cost = ParallelCost.perItem(nanoseconds: Double(end - start) * 0.3)
                        parallelFor(count: g.og, cost: cost) { planes in
                            for plane in planes {
                                epilogue.apply(
                                    output, plane: firstPlane + plane, channel: group * g.og + plane,
                                    columns: start..<end)
                            }
                        }
                    }
                    start = end
                }
            }
        }
        withExtendedLifetime(buffer) {}
    }
}

/// What a convolution does to each output value after its sum: add the bias of its channel,
/// add the residual's value at the same position, clamp — in that order, each optional.
struct ConvEpilogue {
    let bias: UnsafePointer<Float>?
    /// Contiguous, the output's shape.
    let residual: UnsafePointer<Float>?
    let clamp: ConvolutionClamp
    /// Output positions per plane.
    let positions: Int

    /// Whether the epilogue changes nothing.
    var isIdentity: Bool { bias == nil && residual == nil && clamp.isIdentity }

    /// Runs the epilogue over `columns` of output plane `plane` (of output channel `channel`);
    /// without the bias when `addBias` is false (the depthwise kernel starts its sums at it).
    @inline(__always)
    func apply(
        _ output: UnsafeMutablePointer<Float>, plane: Int, channel: Int, columns: Range<Int>, addBias: Bool = true
    ) {
        let planeBias = addBias ? bias?[channel] : nil
        if planeBias == nil && residual == nil && clamp.isIdentity { return }
        let offset = plane * positions + columns.lowerBound
        clamp.apply(to: output + offset, count: columns.count, bias: planeBias, residual: residual.map { $0 + offset })
    }
}

/// Sizes of one convolution, worked out once.
struct ConvGeometry {
    let n, c, h, w: Int
    let o, kh, kw: Int
    let oh, ow: Int
    /// Input channels per group.
    let cg: Int
    /// Output channels per group.
    let og: Int
    let parameters: Conv2DParameters

    init(input: [Int], weight: [Int], output: [Int], parameters: Conv2DParameters) {
        (n, c, h, w) = (input[0], input[1], input[2], input[3])
        (o, kh, kw) = (weight[0], weight[2], weight[3])
        (oh, ow) = (output[2], output[3])
        cg = c / parameters.groups
        og = o / parameters.groups
        self.parameters = parameters
    }

    /// Output positions per plane, `oH · oW`.
    var outputPositions: Int { oh * ow }
    /// Elements in the output.
    var outputCount: Int { n * o * oh * ow }
    /// Rows of the im2col matrix: one per (input channel in group, kernel row, kernel column).
    var patchSize: Int { cg * kh * kw }

    /// The output columns `x` in `lower..<upper` whose input column `x·stride + offset`
    /// lies inside `0..<extent`, clamped to `lower..<upper`.
    @inline(__always)
    static func validRange(lower: Int, upper: Int, offset: Int, stride: Int, extent: Int) -> Range<Int> {
        // x·stride + offset ≥ 0  ⇔  x ≥ ceil(-offset / stride)
        let first = -floorDivide(offset, stride)
        // x·stride + offset ≤ extent - 1  ⇔  x ≤ floor((extent - 1 - offset) / stride)
        let last = floorDivide(extent - 1 - offset, stride)
        let lo = Swift.min(Swift.max(first, lower), upper)
        let hi = Swift.max(Swift.min(last + 1, upper), lo)
        return lo..<hi
    }

    /// `⌊a / b⌋` for positive `b`.
    @inline(__always)
    static func floorDivide(_ a: Int, _ b: Int) -> Int {
        a >= 0 ? a / b : -((-a + b - 1) / b)
    }
}
