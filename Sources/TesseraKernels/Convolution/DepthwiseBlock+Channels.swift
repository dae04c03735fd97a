import CTesseraSIMD

extension DepthwiseBlock {
    /// About how many bytes of the expansion one channel group holds in ``runByChannels``:
    /// half of this machine class's 32 KiB L1 data cache, so the depthwise kernel reads the
    /// group where the product left it.
    package static let channelGroupBytes = 16 << 10

    /// Whether a block with an expansion runs its expansion and depthwise stage by groups of
    /// channels (``runByChannels(input:inputShape:expand:depthwise:output:groupChannels:)``)
    /// rather than by bands of rows: the expansion is smaller than ``minimumIntermediateBytes``
    /// per image, so a band of rows would be a few rows per thread. A projection then runs after
    /// the groups in the same call, over the depthwise planes (it needs every channel of a
    /// position, which no group has).
    ///
    /// - Parameters:
    ///   - middleShape: The expansion's output `[N, C_mid, H, W]`.
    package static func splitsByChannels(hasExpand: Bool, middleShape: [Int]) -> Bool {
        guard hasExpand, middleShape.count == 4 else { return false }
        return middleShape[1] * middleShape[2] * middleShape[3] * MemoryLayout<Float>.stride
            < minimumIntermediateBytes
    }

    /// Whether a block that would run by channel groups (``splitsByChannels(hasExpand:middleShape:)``)
    /// runs in bands of rows instead, an equal run of bands per thread: when the cores are far
    /// apart (``KernelThreads/coresAreFar``) and each thread has at least ``farBandRows`` of
    /// the expansion's input rows.
    ///
    /// By channel groups, each thread's expansion reads the whole input, half of it written by
    /// the other core, and the projection reads every group's planes, half of them the other
    /// core's: about 150 KB a block at 14 × 14 with 384 channels. Between far cores that made
    /// MobileNetV2 at two threads 11–14 % slower than bands, which share only a halo row; between
    /// near cores bands were 0.6–1.5 % slower (each band computes its halo row of the expansion
    /// too, and no thread takes another's band).
    ///
    /// ```swift
    /// DepthwiseBlock.bandsAcrossFarCores(inputRows: 14, budget: 2, coresAreFar: true)  // true
    /// DepthwiseBlock.bandsAcrossFarCores(inputRows: 7, budget: 2, coresAreFar: true)   // false
    /// ```
    package static func bandsAcrossFarCores(inputRows: Int, budget: Int, coresAreFar: Bool) -> Bool {
        coresAreFar && budget > 1 && inputRows >= farBandRows * budget
    }

    /// The fewest input rows per thread for ``bandsAcrossFarCores(inputRows:budget:coresAreFar:)``:
    /// MobileNetV2's 7 × 7 blocks in two bands of 3 and 4 rows compute 10 expansion rows for 7;
    /// in bands too they made the model 5 % slower between far cores.
    package static let farBandRows = 7

    /// Channels per group for planes of `positions` floats: a multiple of the micro-kernel's
    /// eight-row panels whose planes take about ``channelGroupBytes`` (at least one panel).
    ///
    /// ```swift
    /// DepthwiseBlock.groupChannels(positions: 14 * 14)  // 16
    /// DepthwiseBlock.groupChannels(positions: 7 * 7)    // 80
    /// ```
    package static func groupChannels(positions: Int) -> Int {
        let panel = PackedGEMMOperand.panelRows
        let fit = channelGroupBytes / Swift.max(1, positions * MemoryLayout<Float>.stride)
        return Swift.max(panel, fit / panel * panel)
    }

    /// Runs an expansion and the depthwise convolution after it a group of channels at a time:
    /// the expansion computes the group's planes (`groupChannels` rows of the product, every
    /// position) into a scratch block, then the depthwise kernel runs those planes into the
    /// output. The channels of an image are split into contiguous runs of groups across the
    /// threads, so the expansion's output never leaves the core that computes it and is never
    /// written to memory another core reads.
    ///
    /// Every output has the bits of the two convolutions run one after another: the packed
    /// micro-kernel sums each element as one FMA chain in channel order whatever its row block,
    /// and a depthwise plane's sums do not depend on where the plane lies.
    ///
    /// - Parameters:
    ///   - input: Contiguous `[N, C, H, W]`.
    ///   - expand: The expansion `[C_mid, C, 1, 1]` (1 × 1, stride 1, unpadded).
    ///   - depthwise: One kernel per channel of the expansion.
    ///   - output: Contiguous `[N, C_mid, OH, OW]`; must not overlap the input.
    ///   - groupChannels: Channels per group, a positive multiple of
    ///     ``PackedGEMMOperand/panelRows``; `nil` for ``groupChannels(positions:)``.
    /// - Precondition: the shapes match (as
    ///   ``fuses(inputShape:expand:depthwiseWeightShape:depthwiseParameters:project:)`` checks),
    ///   and no clamp has a NaN bound. Runs multithreaded: do not call it from inside a
    ///   `parallelFor` body.
    package static func runByChannels(
        input: UnsafePointer<Float>, inputShape: [Int], expand: DepthwiseBlockPointwise,
        depthwise: DepthwiseBlockDepthwise, output: UnsafeMutablePointer<Float>, groupChannels: Int? = nil
    ) {
        let (n, c, h, w) = (inputShape[0], inputShape[1], inputShape[2], inputShape[3])
        let middle = expand.outputChannels
        let p = depthwise.parameters
        let dwShape = depthwise.weightShape
        let (kh, kw) = (dwShape[2], dwShape[3])
        let dwOutput = p.outputShape(inputShape: [n, middle, h, w], weightShape: dwShape)
        let (oh, ow) = (dwOutput[2], dwOutput[3])
        let group = groupChannels ?? Self.groupChannels(positions: h * w)
        kernelPrecondition(
            expand.inputChannels == c && dwShape[0] == middle && dwShape[1] == 1 && p.groups == middle
                && group > 0 && group % PackedGEMMOperand.panelRows == 0 && !expand.clamp.hasNaNBound
                && !depthwise.clamp.hasNaNBound,
            "[depthwise block] input \(inputShape), expand \([expand.outputChannels, expand.inputChannels]), "
                + "depthwise \(dwShape), \(group) channels per group")
        if n * middle * oh * ow == 0 { return }
        let expandPanels = expand.panels
        let valid = DepthwiseConvolution.validColumns(kernelWidth: kw, width: w, outputWidth: ow, parameters: p)
        let (lower, upper) = depthwise.clamp.kernelBounds
        var geometry = tessera_depthwise_geometry(
            h: h, w: w, kh: kh, kw: kw, oh: oh, ow: ow, sh: p.strideHeight, sw: p.strideWidth, pt: p.padTop,
            pl: p.padLeft, dh: p.dilationHeight, dw: p.dilationWidth)
        let flat = DepthwiseConvolution.flattensPlanes(
            p, height: h, width: w, outputHeight: oh, outputWidth: ow, taps: kh * kw)
        let groups = (middle + group - 1) / group
        // ~0.025 ns per multiply-add of the product, ~0.1 ns per tap and output of the planes.
        let perGroup = Double(group) * (Double(h * w * c) * 0.025 + Double(oh * ow * kh * kw) * 0.1) + 300
        valid.withUnsafeBufferPointer { valid in
            withUnsafePointer(to: &geometry) { geometry in
                parallelFor(count: n * groups, cost: .perItem(nanoseconds: perGroup)) { range in
                    ThreadScratch.withFloats(count: group * h * w) { scratch in
                        for index in range {
                            let image = index / groups
                            let first = (index % groups) * group
                            let count = Swift.min(group, middle - first)
                            let target = output + (image * middle + first) * oh * ow
                            PackedGEMM.multiply(
                                expandPanels, firstRow: first, rows: count, columns: h * w,
                                b: input + image * c * h * w,
                                ldb: h * w, c: scratch, ldc: h * w, bias: expand.bias.map { $0 + first },
                                clamp: expand.clamp)
                            let weights = depthwise.weights + first * kh * kw
                            let bias = depthwise.bias.map { $0 + first }
                            if flat
                                && tessera_depthwise_flat_planes_f32(
                                    scratch, weights, bias, target, 0, count, count, count, 1, geometry, lower, upper)
                                    != 0
                            {
                                continue
                            }
                            _ = tessera_depthwise_strided_planes_f32(
                                scratch, h * w, weights, bias, target, oh * ow, count, geometry, valid.baseAddress!,
                                lower, upper)
                        }
                    }
                }
            }
        }
    }
}
