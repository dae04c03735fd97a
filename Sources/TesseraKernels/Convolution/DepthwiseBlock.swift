import CTesseraSIMD
import Foundation
import Synchronization

/// A pointwise (1 × 1, stride 1, unpadded, one group) convolution inside a ``DepthwiseBlock``:
/// its weight `[O, C, 1, 1]`, in the micro-kernel's panels when prepared, its bias and clamp.
package struct DepthwiseBlockPointwise {
    /// The contiguous weight `[O, C, 1, 1]`.
    package var weights: UnsafePointer<Float>
    /// `O` and `C`.
    package var outputChannels: Int
    package var inputChannels: Int
    /// The weight in the micro-kernel's panels (``PreparedWeights``), or `nil` to pack it per call.
    package var packed: PackedGEMMOperand?
    /// `O` values, or `nil`.
    package var bias: UnsafePointer<Float>?
    /// Applied to each output after the bias (and, for the block's last stage, the residual).
    package var clamp: ConvolutionClamp

    package init(
        weights: UnsafePointer<Float>, outputChannels: Int, inputChannels: Int, packed: PackedGEMMOperand?,
        bias: UnsafePointer<Float>?, clamp: ConvolutionClamp
    ) {
        self.weights = weights
        self.outputChannels = outputChannels
        self.inputChannels = inputChannels
        self.packed = packed
        self.bias = bias
        self.clamp = clamp
    }

    var panels: PackedGEMMOperand {
        ConvolutionKernels.weightPanels(weights, rows: outputChannels, depth: inputChannels, prepared: packed)
    }
}

/// The depthwise convolution inside a ``DepthwiseBlock``: weight `[C, 1, kH, kW]` (one kernel
/// per channel), its parameters (`groups == C`), bias and clamp.
package struct DepthwiseBlockDepthwise {
    package var weights: UnsafePointer<Float>
    /// `[C, 1, kH, kW]`.
    package var weightShape: [Int]
    package var parameters: Conv2DParameters
    package var bias: UnsafePointer<Float>?
    package var clamp: ConvolutionClamp

    package init(
        weights: UnsafePointer<Float>, weightShape: [Int], parameters: Conv2DParameters, bias: UnsafePointer<Float>?,
        clamp: ConvolutionClamp
    ) {
        self.weights = weights
        self.weightShape = weightShape
        self.parameters = parameters
        self.bias = bias
        self.clamp = clamp
    }
}

/// A depthwise convolution with the pointwise convolution before it (MobileNetV2's expansion),
/// the one after it (its projection, with the block's residual), or both, run over bands of
/// output rows so the tensors between them never leave the core's cache.
///
/// Unfused, an inverted-residual block at 112 × 112 writes its 96-channel expansion (4.8 MB) to
/// memory, reads it back for the depthwise convolution, writes that result and reads it again
/// for the projection: more than L2 each time. Here each task takes a band of the depthwise
/// output's rows: the expansion computes the input rows the band needs (keeping the rows it
/// shares with the previous band of the same task, so a stride-1 3 × 3 band computes each row
/// once), the depthwise kernel runs the band of every channel from that scratch block
/// (``tessera_depthwise_strided_planes_f32``), and the projection multiplies the band into the
/// output, bias, residual and clamp included. Bands are sized so the two scratch blocks take
/// about ``bandBytes``. An expansion smaller than ``minimumIntermediateBytes`` runs with its
/// depthwise stage by groups of channels instead
/// (``runByChannels(input:inputShape:expand:depthwise:output:groupChannels:)``), and a
/// projection after them over the whole depthwise output, in the same call. An image model's
/// first layer (``DepthwiseBlockDirect``) can take the expansion's place in the bands.
///
/// Every output has the bits of the three convolutions run one after another
/// (``ConvolutionKernels/conv2d(input:inputShape:weights:weightShape:bias:output:parameters:residual:clamp:packedWeights:winogradFilter:)``):
/// the packed micro-kernel sums each element as one FMA chain in channel order whatever its
/// column block, and the depthwise kernel sums a row's taps the same way in a band as in a whole
/// plane.
///
/// ```swift
/// // [1, 16, 112, 112] → expand to 96 → depthwise 3 × 3 stride 2 → project to 24: [1, 24, 56, 56]
/// DepthwiseBlock.run(input: x, inputShape: [1, 16, 112, 112], expand: e, depthwise: d, project: p,
///                    residual: nil, output: y)
/// ```
package enum DepthwiseBlock {
    /// About how many bytes a task's two scratch blocks (the expansion's rows, the depthwise
    /// band) take: half of this machine class's 1 MiB L2. On MobileNetV2's 112 × 112 and
    /// 56 × 56 blocks, 512 KiB and 1 MiB ran fastest; 128 and 256 KiB paid for their many
    /// smaller products and depthwise calls (`Docs/Performance.md`).
    package static let bandBytes = 512 << 10

    /// Numbers each ``run(input:inputShape:expand:direct:depthwise:project:residual:output:bandRows:coresAreFar:)``
    /// call, so a thread's scratch header is read only in the call that wrote it.
    private static let bandToken = Atomic<Int>(0)

    /// The smallest tensor between two stages (bytes per image) worth fusing in bands of rows:
    /// below it the tensor mostly stays in cache between the steps anyway and the bands' extra
    /// calls cost about what fusing saves (MobileNetV2's 28 × 28 blocks, 602 KB, measured the
    /// same either way on one thread; fusing its 28 × 28 and 14 × 14 blocks too made the model
    /// 3.9 → 4.4 ms on two, too few rows per thread). Below it an expansion and its depthwise
    /// stage fuse by channel groups instead, with the projection after them
    /// (``splitsByChannels(hasExpand:middleShape:)``).
    package static let minimumIntermediateBytes = 1 << 20

    /// Whether blocks may fuse: unless the environment variable `TESSERA_DEPTHWISE_BLOCKS` is
    /// `0` (for A/B runs, see `Docs/Performance.md`).
    package static let isEnabled = ProcessInfo.processInfo.environment["TESSERA_DEPTHWISE_BLOCKS"] != "0"

    /// Whether the block of these shapes runs fused on this CPU: the packed micro-kernel is
    /// preferred (AVX-512) and on; the pointwise stages (at least one) are 1 × 1, stride 1,
    /// unpadded, one group, with the depthwise stage's channel count between them — or the
    /// first stage is an image model's first convolution on the direct path
    /// (``DepthwiseBlockDirect``, bands only, so at least ``minimumIntermediateBytes`` after it); the
    /// depthwise stage has one kernel per channel (`groups == C == O`); and a tensor between two
    /// stages is at least ``minimumIntermediateBytes`` per image, or the block has an expansion
    /// (run with its depthwise stage by channel groups when smaller, the projection after them).
    ///
    /// - Parameters:
    ///   - inputShape: The block's input `[N, C, H, W]` (the expansion's input, or the depthwise
    ///     convolution's when there is no expansion).
    ///   - expand: The first stage's weight `[C_mid, C, 1, 1]` (or `[C_mid, C, kH, kW]` for a
    ///     direct first layer) and its parameters, or `nil`.
    ///   - depthwiseWeightShape: `[C_mid, 1, kH, kW]`.
    ///   - projectWeightShape: `[C_out, C_mid, 1, 1]` and its parameters, or `nil`.
    package static func fuses(
        inputShape: [Int], expand: (weightShape: [Int], parameters: Conv2DParameters)?,
        depthwiseWeightShape: [Int], depthwiseParameters: Conv2DParameters,
        project: (weightShape: [Int], parameters: Conv2DParameters)?
    ) -> Bool {
        guard isEnabled, PackedGEMM.isPreferred, ConvolutionKernels.packedGEMMEnabled, expand != nil || project != nil,
            inputShape.count == 4, depthwiseWeightShape.count == 4
        else { return false }
        var shape = inputShape
        // An image model's first convolution before the depthwise stage runs in the bands too.
        var direct = false
        if let expand {
            direct = DepthwiseBlockDirect.fuses(
                inputShape: shape, weightShape: expand.weightShape, parameters: expand.parameters)
            guard
                direct
                    || (expand.weightShape.count == 4 && expand.weightShape[1] == shape[1]
                        && ConvolutionKernels.route(
                            inputShape: shape, weightShape: expand.weightShape, parameters: expand.parameters)
                            == .packedPointwise)
            else { return false }
            shape = expand.parameters.outputShape(inputShape: shape, weightShape: expand.weightShape)
        }
        let channels = shape[1]
        guard depthwiseWeightShape[0] == channels, depthwiseWeightShape[1] == 1,
            depthwiseParameters.groups == channels, channels > 1,
            (try? depthwiseParameters.checkedOutputShape(inputShape: shape, weightShape: depthwiseWeightShape)) != nil
        else { return false }
        let middle = shape
        shape = depthwiseParameters.outputShape(inputShape: shape, weightShape: depthwiseWeightShape)
        if let project {
            guard project.weightShape.count == 4, project.weightShape[1] == channels,
                ConvolutionKernels.route(
                    inputShape: shape, weightShape: project.weightShape, parameters: project.parameters)
                    == .packedPointwise
            else { return false }
        }
        let bytes = MemoryLayout<Float>.stride
        let between = Swift.max(
            expand == nil ? 0 : middle[1] * middle[2] * middle[3] * bytes,
            project == nil ? 0 : shape[1] * shape[2] * shape[3] * bytes)
        guard shape[2] > 0 && shape[3] > 0 else { return false }
        // A small expansion runs with its depthwise convolution by channel groups, any
        // projection after them.
        return between >= minimumIntermediateBytes
            || (!direct && splitsByChannels(hasExpand: expand != nil, middleShape: middle))
    }

    /// Runs the block: `output = project(depthwise(expand(input)))`, each stage with its bias
    /// and clamp, the projection adding `residual` (the output's shape) before its clamp.
    ///
    /// - Parameters:
    ///   - input: Contiguous `[N, C, H, W]`.
    ///   - expand: The expansion `[C_mid, C, 1, 1]`, or `nil` (the input is the depthwise
    ///     convolution's, `C == C_mid`, unless `direct` is given).
    ///   - direct: An image model's first layer `[C_mid, C, kH, kW]` in the expansion's place
    ///     (``DepthwiseBlockDirect/fuses(inputShape:weightShape:parameters:)`` holds, `expand` is
    ///     `nil`, no NaN bound), or `nil`. Runs in bands whatever `bandRows` is.
    ///   - depthwise: One `kH × kW` kernel per channel.
    ///   - project: The projection `[C_out, C_mid, 1, 1]`, or `nil` (the output is the
    ///     depthwise convolution's).
    ///   - residual: Contiguous, the output's shape, added by the projection; `nil` for none
    ///     (must be `nil` without a projection).
    ///   - output: Contiguous `[N, C_out, OH, OW]`; must not overlap the input or the residual.
    ///   - bandRows: Output rows per band; `nil` for the rows that fit ``bandBytes`` (tests
    ///     pass small values to cross many band edges), and then an expansion that
    ///     ``splitsByChannels(hasExpand:middleShape:)`` runs by channel groups
    ///     (``runByChannels(input:inputShape:expand:depthwise:output:groupChannels:)``), the
    ///     projection, if any, after them over the depthwise planes — unless
    ///     ``bandsAcrossFarCores(inputRows:budget:coresAreFar:)`` holds.
    ///   - coresAreFar: Whether the threads' cores are far apart (``KernelThreads/coresAreFar``,
    ///     measured as the loops run; tests pass both).
    /// - Precondition: ``fuses(inputShape:expand:depthwiseWeightShape:depthwiseParameters:project:)``
    ///   holds for these shapes, apart from the size threshold, and no clamp has a NaN bound.
    ///   Runs multithreaded: do not call it from inside a `parallelFor` body.
    package static func run(
        input: UnsafePointer<Float>, inputShape: [Int], expand: DepthwiseBlockPointwise?,
        direct: DepthwiseBlockDirect? = nil, depthwise: DepthwiseBlockDepthwise, project: DepthwiseBlockPointwise?,
        residual: UnsafePointer<Float>?, output: UnsafeMutablePointer<Float>, bandRows: Int? = nil,
        coresAreFar: Bool = KernelThreads.coresAreFar
    ) {
        let (n, c) = (inputShape[0], inputShape[1])
        // The depthwise stage's input planes are `h × w`: the first layer's output with one.
        let firstShape = direct.map {
            $0.parameters.outputShape(inputShape: inputShape, weightShape: $0.weightShape)
        }
        let (h, w) = (firstShape?[2] ?? inputShape[2], firstShape?[3] ?? inputShape[3])
        let middle = expand?.outputChannels ?? direct?.weightShape[0] ?? c
        let p = depthwise.parameters
        let dwShape = depthwise.weightShape
        let dwOutput = p.outputShape(inputShape: [n, middle, h, w], weightShape: dwShape)
        let (oh, ow) = (dwOutput[2], dwOutput[3])
        let outChannels = project?.outputChannels ?? middle
        kernelPrecondition(
            (expand == nil || expand!.inputChannels == c) && (project == nil || project!.inputChannels == middle)
                && (direct == nil
                    || (expand == nil && !direct!.clamp.hasNaNBound
                        && DepthwiseBlockDirect.fuses(
                            inputShape: inputShape, weightShape: direct!.weightShape, parameters: direct!.parameters)))
                && dwShape[0] == middle && p.groups == middle && (residual == nil || project != nil)
                && !(expand?.clamp.hasNaNBound ?? false) && !depthwise.clamp.hasNaNBound
                && !(project?.clamp.hasNaNBound ?? false),
            "[depthwise block] input \(inputShape), expand \(expand.map { [$0.outputChannels, $0.inputChannels] } ?? []), "
                + "first layer \(direct.map { "\($0.weightShape) \($0.parameters)" } ?? "-"), "
                + "depthwise \(dwShape), project \(project.map { [$0.outputChannels, $0.inputChannels] } ?? [])")
        if n * outChannels * oh * ow == 0 { return }
        let budget = KernelThreads.coreBudget
        let splitsChannels =
            expand != nil && bandRows == nil && splitsByChannels(hasExpand: true, middleShape: [n, middle, h, w])
        let farBands =
            splitsChannels && bandsAcrossFarCores(inputRows: h, budget: budget, coresAreFar: coresAreFar)
        if let expand, splitsChannels, !farBands {
            guard let project else {
                runByChannels(
                    input: input, inputShape: inputShape, expand: expand, depthwise: depthwise, output: output)
                return
            }
            // The depthwise planes go to a pooled buffer, then the projection multiplies them
            // as its own step would: the same kernel, blocks and bits, without a step between.
            let planes = TensorStorage.allocate(count: n * middle * oh * ow, type: .float32)
            let middlePlanes = planes.pointer.assumingMemoryBound(to: Float.self)
            runByChannels(
                input: input, inputShape: inputShape, expand: expand, depthwise: depthwise, output: middlePlanes)
            let geometry = ConvGeometry(
                input: [n, middle, oh, ow], weight: [outChannels, middle, 1, 1], output: [n, outChannels, oh, ow],
                parameters: Conv2DParameters())
            ConvolutionKernels.packedPointwise(
                geometry, input: middlePlanes, packed: project.panels, output: output,
                epilogue: ConvEpilogue(
                    bias: project.bias, residual: residual, clamp: project.clamp, positions: geometry.outputPositions))
            withExtendedLifetime(planes) {}
            return
        }
        let (kh, kw) = (dwShape[2], dwShape[3])
        let reach = (kh - 1) * p.dilationHeight + 1
        // The first stage computes the depthwise input's rows band by band: an expansion, or a
        // first layer whose input rows are split into their column phases here, once.
        let producesRows = expand != nil || direct != nil
        let directRows = direct.map { DirectRows($0, input: input, inputShape: inputShape) }
        let firstPatch = directRows?.patch ?? 0
        let floats = MemoryLayout<Float>.stride
        // Rows per band: the expansion's rows (stride rows per output row) and the depthwise
        // band (one row each) within bandBytes, the halo of reach - stride rows on top.
        let perRow =
            (!producesRows ? 0 : middle * p.strideHeight * w * floats) + (project == nil ? 0 : middle * ow * floats)
        let halo = !producesRows ? 0 : middle * Swift.max(0, reach - p.strideHeight) * w * floats
        var rows = bandRows ?? Swift.max(1, (bandBytes - halo) / Swift.max(1, perRow))
        rows = Swift.max(1, Swift.min(rows, oh))
        // Input rows a band reads: at most (rows - 1) · stride + reach.
        let capacityRows = Swift.min(h, (rows - 1) * p.strideHeight + reach)
        let middleCapacity = !producesRows ? 0 : middle * capacityRows * w
        let bandCapacity = project == nil ? 0 : middle * rows * ow

        let expandPanels = expand?.panels
        let projectPanels = project?.panels
        let valid = DepthwiseConvolution.validColumns(kernelWidth: kw, width: w, outputWidth: ow, parameters: p)
        let (lower, upper) = depthwise.clamp.kernelBounds
        // Every image's output rows in bands of at most `rows`, evened out; with more than one
        // thread, at least four bands per thread where the rows allow, so a thread that finishes
        // its own run of bands takes the other's last ones (two runs of bands, one per thread,
        // left a core idle whenever the other ran slower: the 112 × 112 and 56 × 56 blocks ran
        // 1.5 times faster on two cores than on one).
        var piecesPerImage = (oh + rows - 1) / rows
        if farBands {
            // An equal run of bands per thread, each its thread's own part of the rows: a band
            // taken from the other thread would compute its rows again and read far ones.
            piecesPerImage = Swift.min(oh, (piecesPerImage + budget - 1) / budget * budget)
        } else if budget > 1 && bandRows == nil {
            piecesPerImage = Swift.max(piecesPerImage, Swift.min(oh, (4 * budget + n - 1) / n))
        }
        var bands: [(image: Int, y0: Int, y1: Int)] = []
        bands.reserveCapacity(n * piecesPerImage)
        for image in 0..<n {
            for piece in 0..<piecesPerImage {
                bands.append((image, piece * oh / piecesPerImage, (piece + 1) * oh / piecesPerImage))
            }
        }
        let perRowCost =
            Double(ow) * Double(kh * kw) * Double(middle) * 0.1
            + Double(!producesRows ? 0 : p.strideHeight * w * middle * (direct == nil ? c : firstPatch)) * 0.025
            + Double(project == nil ? 0 : ow * middle * outChannels) * 0.025 + 500 / Double(rows)
        // The expansion's rows a thread holds are kept across the chunks of bands it runs: its
        // scratch block starts with a header (this call's token, the image, the input rows
        // [base, filled) held), so the next band along reuses the rows the two share. Only the
        // first band of a thread's run, and bands taken from the other thread, compute them again.
        let token = bandToken.add(1, ordering: .relaxed).newValue
        let headerFloats = 16
        bands.withUnsafeBufferPointer { bands in
            valid.withUnsafeBufferPointer { valid in
                parallelFor(
                    count: bands.count, cost: .perItem(nanoseconds: perRowCost * Double(n * oh) / Double(bands.count))
                ) { range in
                    ThreadScratch.withFloats(count: headerFloats + middleCapacity + bandCapacity) { scratch in
                        let header = UnsafeMutableRawPointer(scratch)
                        let middleRows = scratch + headerFloats
                        let band = middleRows + middleCapacity
                        // The first layer's row pointers for the rows a band computes.
                        let pointers = directRows.map { _ in
                            UnsafeMutablePointer<UnsafePointer<Float>?>.allocate(capacity: capacityRows * firstPatch)
                        }
                        defer { pointers?.deallocate() }
                        // The expansion's rows in `middleRows`: the image, and the input rows
                        // [base, filled) from the block's first row.
                        var held: (image: Int, base: Int, filled: Int)?
                        if header.load(fromByteOffset: 0, as: Int.self) == token {
                            held = (
                                header.load(fromByteOffset: 8, as: Int.self),
                                header.load(fromByteOffset: 16, as: Int.self),
                                header.load(fromByteOffset: 24, as: Int.self)
                            )
                        }
                        defer {
                            header.storeBytes(of: held == nil ? 0 : token, toByteOffset: 0, as: Int.self)
                            if let held {
                                header.storeBytes(of: held.image, toByteOffset: 8, as: Int.self)
                                header.storeBytes(of: held.base, toByteOffset: 16, as: Int.self)
                                header.storeBytes(of: held.filled, toByteOffset: 24, as: Int.self)
                            }
                        }
                        for (image, y0, y1) in bands[range] {
                            let r0 = Swift.max(0, y0 * p.strideHeight - p.padTop)
                            let r1 = Swift.min(h, (y1 - 1) * p.strideHeight - p.padTop + reach)
                            let dwInput: UnsafePointer<Float>
                            let inputStride: Int
                            if producesRows {
                                // Rows this band shares with the thread's previous one move to the front.
                                var first = r0
                                if let kept = held, kept.image == image, kept.base <= r0, r0 < kept.filled {
                                    first = Swift.min(r1, kept.filled)
                                    if r0 > kept.base {
                                        for channel in 0..<middle {
                                            let plane = middleRows + channel * capacityRows * w
                                            plane.update(from: plane + (r0 - kept.base) * w, count: (first - r0) * w)
                                        }
                                    }
                                }
                                held = (image, r0, r1)
                                if first < r1, let expand, let expandPanels {
                                    PackedGEMM.multiply(
                                        expandPanels, firstRow: 0, rows: middle, columns: (r1 - first) * w,
                                        b: input + image * c * h * w + first * w, ldb: h * w,
                                        c: middleRows + (first - r0) * w, ldc: capacityRows * w, bias: expand.bias,
                                        clamp: expand.clamp)
                                } else if first < r1, let directRows, let pointers {
                                    directRows.rows(
                                        image: image, first, r1, into: middleRows + (first - r0) * w,
                                        ldc: capacityRows * w, pointers: pointers)
                                }
                                dwInput = UnsafePointer(middleRows)
                                inputStride = capacityRows * w
                            } else {
                                dwInput = input + image * c * h * w + r0 * w
                                inputStride = h * w
                            }
                            let dwOutput: UnsafeMutablePointer<Float>
                            let outputStride: Int
                            if project != nil {
                                dwOutput = band
                                outputStride = rows * ow
                            } else {
                                dwOutput = output + image * middle * oh * ow + y0 * ow
                                outputStride = oh * ow
                            }
                            var geometry = tessera_depthwise_geometry(
                                h: r1 - r0, w: w, kh: kh, kw: kw, oh: y1 - y0, ow: ow, sh: p.strideHeight,
                                sw: p.strideWidth, pt: p.padTop + r0 - y0 * p.strideHeight, pl: p.padLeft,
                                dh: p.dilationHeight, dw: p.dilationWidth)
                            _ = tessera_depthwise_strided_planes_f32(
                                dwInput, inputStride, depthwise.weights, depthwise.bias, dwOutput, outputStride, middle,
                                &geometry, valid.baseAddress!, lower, upper)
                            if let project, let projectPanels {
                                let offset = image * outChannels * oh * ow + y0 * ow
                                PackedGEMM.multiply(
                                    projectPanels, firstRow: 0, rows: outChannels, columns: (y1 - y0) * ow,
                                    b: band, ldb: rows * ow, c: output + offset, ldc: oh * ow, bias: project.bias,
                                    residual: residual.map { $0 + offset }, residualStride: oh * ow,
                                    clamp: project.clamp)
                            }
                        }
                    }
                }
            }
        }
        withExtendedLifetime(directRows) {}
    }
}
