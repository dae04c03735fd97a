/// 2-D convolution over contiguous NCHW Float32 tensors.
///
/// Three paths, chosen from the shapes:
///
/// - **depthwise** (`groups == C`, `C > 1`): a direct loop per output plane, each block of an
///   output row summed in a register across the kernel taps, parallel over `N × O` planes;
/// - **pointwise** (1×1 kernel, stride 1, no padding): one GEMM per image and group,
///   `W[O/g, C/g] × X[C/g, H·W]`, reading the input in place;
/// - **im2col + GEMM** otherwise: for each image and group, the input patches are unrolled
///   into a `[C/g·kH·kW, tile]` column buffer (built in parallel over its rows), then
///   `W[O/g, C/g·kH·kW] × cols` lands directly in the NCHW output. The output positions are
///   processed in tiles so the column buffer stays under ``defaultColumnBufferBytes``.
///
/// An optional ``ConvolutionClamp`` (ReLU, ReLU6, any `[lower, upper]`) is applied as each part
/// of the output is finished — per plane in the depthwise kernel, together with the bias after
/// each image's (or tile's) GEMM — so an activation costs no pass of its own.
///
/// ```swift
/// let p = Conv2DParameters(padding: (top: 1, bottom: 1, left: 1, right: 1))
/// ConvolutionKernels.conv2d(input: x, inputShape: [1, 64, 56, 56], weights: w,
///                           weightShape: [64, 64, 3, 3], bias: b, output: y, parameters: p)
/// ```
public enum ConvolutionKernels {
    /// The largest im2col column buffer, in bytes; output positions are tiled to stay below it.
    public static let defaultColumnBufferBytes = 8 << 20

    /// Which algorithm ``conv2d(input:inputShape:weights:weightShape:bias:output:parameters:clamp:)``
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
    /// and applying an optional clamp.
    ///
    /// Computes, for every image `n`, output channel `o` in group `g = o / (O/groups)` and
    /// output position `(y, x)`:
    /// `out[n, o, y, x] = bias[o] + Σ_{c, i, j} W[o, c, i, j] · in[n, g·C/groups + c, y·sH - padTop + i·dH, x·sW - padLeft + j·dW]`,
    /// with input positions outside the image reading as 0 — PyTorch's `conv2d` (a
    /// cross-correlation, like every deep-learning framework's) — then `clamp` applied to it.
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
    ///   - clamp: The activation applied to each output value (``ConvolutionClamp/none`` by
    ///     default); the same bits as `min(max(out, lower), upper)` run afterwards.
    /// - Precondition: The configuration is valid (see
    ///   ``Conv2DParameters/outputShape(inputShape:weightShape:)``).
    /// - Note: The im2col path needs a column buffer of at most ``defaultColumnBufferBytes``
    ///   (more only if a single output position's patch is larger). It comes from
    ///   ``BufferPool/shared`` so repeated calls reuse it; if the pool's memory limit refuses,
    ///   the kernel allocates it outside the pool instead of failing, since the amount is
    ///   bounded. Runs multithreaded (OpenBLAS and ``parallelFor(count:cost:alignment:_:)``):
    ///   do not call it from inside a `parallelFor` body.
    public static func conv2d(
        input: UnsafePointer<Float>, inputShape: [Int], weights: UnsafePointer<Float>, weightShape: [Int],
        bias: UnsafePointer<Float>?, output: UnsafeMutablePointer<Float>, parameters: Conv2DParameters,
        clamp: ConvolutionClamp = .none
    ) {
        conv2d(
            input: input, inputShape: inputShape, weights: weights, weightShape: weightShape, bias: bias,
            output: output, parameters: parameters, clamp: clamp, columnBufferBytes: defaultColumnBufferBytes)
    }

    /// ``conv2d(input:inputShape:weights:weightShape:bias:output:parameters:clamp:)`` with an explicit
    /// column-buffer budget, so tests can force the tiled im2col path on small data.
    static func conv2d(
        input: UnsafePointer<Float>, inputShape: [Int], weights: UnsafePointer<Float>, weightShape: [Int],
        bias: UnsafePointer<Float>?, output: UnsafeMutablePointer<Float>, parameters: Conv2DParameters,
        clamp: ConvolutionClamp = .none, columnBufferBytes: Int
    ) {
        let outputShape = parameters.outputShape(inputShape: inputShape, weightShape: weightShape)
        let geometry = ConvGeometry(input: inputShape, weight: weightShape, output: outputShape, parameters: parameters)
        if geometry.outputCount == 0 { return }
        switch path(channels: geometry.c, kernelHeight: geometry.kh, kernelWidth: geometry.kw, parameters: parameters) {
        case .depthwise:
            DepthwiseConvolution.run(
                geometry, input: input, weights: weights, bias: bias, output: output, clamp: clamp)
        case .pointwise:
            pointwise(geometry, input: input, weights: weights, bias: bias, output: output, clamp: clamp)
        case .im2col:
            im2colGEMM(
                geometry, input: input, weights: weights, bias: bias, output: output, clamp: clamp,
                columnBufferBytes: columnBufferBytes)
        }
        if clamp.hasNaNBound { clamp.fillNaN(output, count: geometry.outputCount) }
    }

    /// The output bytes of one pointwise tile: small enough that the tile is still in the core's
    /// L2 cache when its bias and clamp are applied right after its GEMM.
    static let pointwiseTileBytes = 128 << 10

    /// 1×1, stride 1, unpadded: `out[n, group] = W[group] × in[n, group]`. Each image and group
    /// is split into column tiles of about ``pointwiseTileBytes`` of output, run in parallel:
    /// one single-threaded GEMM per tile, then the bias and the clamp over the tile while it is
    /// in cache.
    private static func pointwise(
        _ g: ConvGeometry, input: UnsafePointer<Float>, weights: UnsafePointer<Float>, bias: UnsafePointer<Float>?,
        output: UnsafeMutablePointer<Float>, clamp: ConvolutionClamp
    ) {
        let positions = g.outputPositions
        let tile = pointwiseTileColumns(outputChannels: g.og, positions: positions)
        let tiles = (positions + tile - 1) / tile
        let cost = ParallelCost.perItem(nanoseconds: Double(g.og * g.cg * tile) * 0.02 + 500)
        for image in 0..<g.n {
            for group in 0..<g.parameters.groups {
                let a = weights + group * g.og * g.cg
                let b = input + (image * g.c + group * g.cg) * g.h * g.w
                let c = output + (image * g.o + group * g.og) * positions
                parallelFor(count: tiles, cost: cost) { range in
                    for index in range {
                        let start = index * tile
                        let width = Swift.min(tile, positions - start)
                        GEMMKernels.sgemm(
                            transposeA: false, transposeB: false, m: g.og, n: width, k: g.cg, alpha: 1, a: a,
                            lda: g.cg, b: b + start, ldb: positions, beta: 0, c: c + start, ldc: positions)
                        if bias == nil && clamp.isIdentity { continue }
                        for channel in 0..<g.og {
                            clamp.apply(
                                to: c + channel * positions + start, count: width,
                                bias: bias?[group * g.og + channel])
                        }
                    }
                }
            }
        }
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
    /// bias and the clamp over the tile's columns of each output plane.
    private static func im2colGEMM(
        _ g: ConvGeometry, input: UnsafePointer<Float>, weights: UnsafePointer<Float>, bias: UnsafePointer<Float>?,
        output: UnsafeMutablePointer<Float>, clamp: ConvolutionClamp, columnBufferBytes: Int
    ) {
        let positions = g.outputPositions
        let patch = g.patchSize
        let tile = Swift.max(1, Swift.min(positions, columnBufferBytes / MemoryLayout<Float>.stride / patch))
        let buffer = GEMMKernels.temporary(Float.self, count: patch * tile)
        let columns = buffer.typedPointer(Float.self)
        for image in 0..<g.n {
            for group in 0..<g.parameters.groups {
                let groupInput = input + (image * g.c + group * g.cg) * g.h * g.w
                var start = 0
                while start < positions {
                    let end = Swift.min(positions, start + tile)
                    Im2Col.fill(columns, from: groupInput, geometry: g, positions: start..<end)
                    GEMMKernels.sgemm(
                        transposeA: false, transposeB: false, m: g.og, n: end - start, k: patch, alpha: 1,
                        a: weights + group * g.og * patch, lda: patch, b: columns, ldb: end - start, beta: 0,
                        c: output + (image * g.o + group * g.og) * positions + start, ldc: positions)
                    finish(
                        output + image * g.o * positions, channels: (group * g.og)..<((group + 1) * g.og),
                        columns: start..<end, g, bias, clamp)
                    start = end
                }
            }
        }
        withExtendedLifetime(buffer) {}
    }

    /// Adds `bias[o]` to, and applies `clamp` to, `columns` of the output planes `channels` of
    /// one image (`image` points at its first plane), in parallel over the planes.
    private static func finish(
        _ image: UnsafeMutablePointer<Float>, channels: Range<Int>, columns: Range<Int>, _ g: ConvGeometry,
        _ bias: UnsafePointer<Float>?, _ clamp: ConvolutionClamp
    ) {
        if bias == nil && clamp.isIdentity { return }
        let positions = g.outputPositions
        let cost = ParallelCost.perItem(nanoseconds: Double(columns.count) * 0.3)
        parallelFor(count: channels.count, cost: cost) { planes in
            for plane in planes {
                let channel = channels.lowerBound + plane
                clamp.apply(
                    to: image + channel * positions + columns.lowerBound, count: columns.count, bias: bias?[channel])
            }
        }
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
