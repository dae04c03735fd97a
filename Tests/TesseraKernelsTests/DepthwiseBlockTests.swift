import Testing
import _TesseraTestSupport

@testable import TesseraKernels

/// ``DepthwiseBlock``: the fused expand → depthwise → project against the three convolutions
/// run one after another (``ConvolutionKernels/conv2d(input:inputShape:weights:weightShape:bias:output:parameters:residual:clamp:packedWeights:winogradFilter:)``),
/// bit for bit, across band sizes that put band edges everywhere, and (band size `nil`, the
/// expansions under ``DepthwiseBlock/minimumIntermediateBytes``) by channel groups with the
/// projection after them.
@Suite("Depthwise blocks", .enabled(if: PackedGEMM.isPreferred, "the fused block needs the AVX-512 micro-kernel"))
struct DepthwiseBlockTests {
    /// One block: input `[N, C, H, W]`, expansion to `middle` channels (or none), a depthwise
    /// kernel with `parameters`, projection to `outputs` channels (or none), with a residual.
    struct Case: CustomStringConvertible {
        var input: [Int]
        var middle: Int?
        var kernel = 3
        var parameters: Conv2DParameters
        var outputs: Int?
        var residual = false
        var clamp = ConvolutionClamp(lower: 0, upper: 6)

        var description: String {
            "\(input) → \(middle.map(String.init) ?? "-") → dw\(kernel) \(parameters) → "
                + "\(outputs.map(String.init) ?? "-")\(residual ? " + residual" : "")"
        }
    }

    static let cases: [Case] = [
        // MobileNetV2's stride-1 block with its residual, odd sizes, two images.
        Case(
            input: [2, 5, 13, 11], middle: 24, parameters: Conv2DParameters(padding: (1, 1, 1, 1), groups: 24),
            outputs: 5, residual: true),
        // Stride 2, expansion only.
        Case(
            input: [1, 4, 15, 17], middle: 16,
            parameters: Conv2DParameters(strides: (2, 2), padding: (1, 1, 1, 1), groups: 16)),
        // Stride 2 padded as TensorFlow's "same" (bottom and right only), projection only.
        Case(
            input: [1, 8, 16, 14], middle: nil,
            parameters: Conv2DParameters(strides: (2, 2), padding: (0, 1, 0, 1), groups: 8), outputs: 12),
        // 5 × 5 (the output-rows-outer kernels), no clamp on the projection's residual sum.
        Case(
            input: [1, 3, 12, 9], middle: 10, kernel: 5,
            parameters: Conv2DParameters(padding: (2, 2, 2, 2), groups: 10), outputs: 3, residual: true,
            clamp: .none),
        // Dilation 2, unpadded rows.
        Case(
            input: [1, 6, 14, 10], middle: 8,
            parameters: Conv2DParameters(dilations: (2, 2), padding: (0, 0, 2, 2), groups: 8), outputs: 7),
        // Three images of 9 rows: the threads' segments of rows cross from one image to the next.
        Case(
            input: [3, 4, 9, 7], middle: 12, parameters: Conv2DParameters(padding: (1, 1, 1, 1), groups: 12),
            outputs: 4, residual: true),
        // Large enough to run on several threads, in segments of bands.
        Case(
            input: [1, 16, 64, 48], middle: 48,
            parameters: Conv2DParameters(strides: (2, 2), padding: (1, 1, 1, 1), groups: 48), outputs: 24),
        Case(
            input: [1, 16, 40, 40], middle: 64, parameters: Conv2DParameters(padding: (1, 1, 1, 1), groups: 64),
            outputs: 16, residual: true),
    ]

    /// Values in [-2, 2) in steps of 1/8 (so sums of a few products are exact) with a NaN and a -0.
    static func values(_ count: Int, seed: UInt64) -> [Float] {
        var random = SeededRandom(seed: seed)
        var v = (0..<count).map { _ in Float(Int.random(in: -16..<16, using: &random)) / 8 }
        if count > 7 { v[7] = -0.0 }
        return v
    }

    /// A case's input (with a NaN) and its expansion's and depthwise stage's weights and
    /// biases, from seeds `seed` to `seed + 4`.
    static func inputs(_ c: Case, seed: UInt64) -> (
        x: [Float], we: [Float], be: [Float], wd: [Float], bd: [Float]
    ) {
        let middle = c.middle ?? c.input[1]
        var x = values(c.input.reduce(1, *), seed: seed)
        x[3] = .nan
        return (
            x, values(middle * c.input[1], seed: seed + 1), values(middle, seed: seed + 2),
            values(middle * c.kernel * c.kernel, seed: seed + 3), values(middle, seed: seed + 4)
        )
    }

    /// The three convolutions, one after another.
    static func unfused(
        _ c: Case, x: [Float], we: [Float], be: [Float], wd: [Float], bd: [Float], wp: [Float],
        bp: [Float], r: [Float]
    ) -> [Float] {
        var current = x
        var shape = c.input
        if let middle = c.middle {
            let weight = [middle, shape[1], 1, 1]
            current = conv(current, shape, we, weight, be, Conv2DParameters(), nil, c.clamp)
            shape = Conv2DParameters().outputShape(inputShape: shape, weightShape: weight)
        }
        let dwWeight = [shape[1], 1, c.kernel, c.kernel]
        current = conv(current, shape, wd, dwWeight, bd, c.parameters, nil, c.clamp)
        shape = c.parameters.outputShape(inputShape: shape, weightShape: dwWeight)
        if let outputs = c.outputs {
            current = conv(
                current, shape, wp, [outputs, shape[1], 1, 1], bp, Conv2DParameters(), c.residual ? r : nil, c.clamp)
        }
        return current
    }

    static func conv(
        _ x: [Float], _ shape: [Int], _ w: [Float], _ weight: [Int], _ b: [Float], _ p: Conv2DParameters,
        _ residual: [Float]?, _ clamp: ConvolutionClamp
    ) -> [Float] {
        let out = p.outputShape(inputShape: shape, weightShape: weight)
        var y = [Float](repeating: .nan, count: out.reduce(1, *))
        y.withUnsafeMutableBufferPointer { y in
            ConvolutionKernels.conv2d(
                input: x, inputShape: shape, weights: w, weightShape: weight, bias: b, output: y.baseAddress!,
                parameters: p, residual: residual, clamp: clamp)
        }
        return y
    }

    /// A case's operands (seeds `seed` to `seed + 7`), the block's output shape and the three
    /// convolutions' result.
    struct Operands {
        var x: [Float], we: [Float], be: [Float], wd: [Float], bd: [Float], wp: [Float], bp: [Float], r: [Float]
        var outShape: [Int]
        var expected: [Float]

        init(_ c: Case, seed: UInt64) {
            let middle = c.middle ?? c.input[1]
            let dwShape = c.parameters.outputShape(
                inputShape: [c.input[0], middle, c.input[2], c.input[3]], weightShape: [middle, 1, c.kernel, c.kernel])
            let outputs = c.outputs ?? middle
            outShape = [dwShape[0], outputs, dwShape[2], dwShape[3]]
            (x, we, be, wd, bd) = DepthwiseBlockTests.inputs(c, seed: seed)
            wp = DepthwiseBlockTests.values(outputs * middle, seed: seed + 5)
            bp = DepthwiseBlockTests.values(outputs, seed: seed + 6)
            r = DepthwiseBlockTests.values(outShape.reduce(1, *), seed: seed + 7)
            expected = DepthwiseBlockTests.unfused(c, x: x, we: we, be: be, wd: wd, bd: bd, wp: wp, bp: bp, r: r)
        }
    }

    /// The fused block on `o`'s operands, the expansion's weights prepared or not, and how many
    /// of its outputs differ from the three convolutions' in their bits.
    static func mismatches(
        _ c: Case, _ o: Operands, preparedExpand: Bool, bandRows: Int? = nil, coresAreFar: Bool = false
    ) -> Int {
        let middle = c.middle ?? c.input[1]
        var got = [Float](repeating: 12345, count: o.outShape.reduce(1, *))
        got.withUnsafeMutableBufferPointer { out in
            let expand = c.middle.map { m in
                DepthwiseBlockPointwise(
                    weights: o.we, outputChannels: m, inputChannels: c.input[1],
                    packed: preparedExpand
                        ? PackedGEMMOperand(packing: o.we, lda: c.input[1], rows: m, depth: c.input[1]) : nil,
                    bias: o.be, clamp: c.clamp)
            }
            let project = c.outputs.map { outputs in
                DepthwiseBlockPointwise(
                    weights: o.wp, outputChannels: outputs, inputChannels: middle,
                    packed: PackedGEMMOperand(packing: o.wp, lda: middle, rows: outputs, depth: middle), bias: o.bp,
                    clamp: c.clamp)
            }
            DepthwiseBlock.run(
                input: o.x, inputShape: c.input, expand: expand,
                depthwise: DepthwiseBlockDepthwise(
                    weights: o.wd, weightShape: [middle, 1, c.kernel, c.kernel], parameters: c.parameters,
                    bias: o.bd, clamp: c.clamp),
                project: project, residual: c.residual ? o.r : nil, output: out.baseAddress!, bandRows: bandRows,
                coresAreFar: coresAreFar)
        }
        return zip(got, o.expected).filter { $0.bitPattern != $1.bitPattern }.count
    }

    @Test(
        "the fused block gives the bits of its three convolutions: in bands of every size, by channel groups",
        arguments: cases)
    func matchesUnfused(_ c: Case) {
        let operands = Operands(c, seed: 1)
        #expect(operands.expected.contains { $0.isNaN } && operands.expected.contains { !$0.isNaN }, "\(c)")
        for bandRows in [1, 2, 3, 5, nil] as [Int?] {
            let mismatches = Self.mismatches(c, operands, preparedExpand: false, bandRows: bandRows)
            #expect(mismatches == 0, "\(c), band rows \(bandRows.map(String.init) ?? "auto"): \(mismatches) differ")
        }
    }

    static let channelCases: [Case] = [
        // Stride 1 with padding, two images; 24 channels: a last group of 8 with 16 per group.
        Case(input: [2, 5, 13, 11], middle: 24, parameters: Conv2DParameters(padding: (1, 1, 1, 1), groups: 24)),
        // Stride 2 into odd sizes.
        Case(
            input: [1, 4, 15, 17], middle: 16,
            parameters: Conv2DParameters(strides: (2, 2), padding: (1, 1, 1, 1), groups: 16)),
        // 7 × 7 planes (the flattened depthwise kernel); 40 channels: groups of 16, 16 and 8.
        Case(input: [1, 8, 7, 7], middle: 40, parameters: Conv2DParameters(padding: (1, 1, 1, 1), groups: 40)),
        // 5 × 5 with 10 channels: a group of two rows, less than a panel.
        Case(
            input: [1, 3, 12, 9], middle: 10, kernel: 5,
            parameters: Conv2DParameters(padding: (2, 2, 2, 2), groups: 10), clamp: .none),
        // Dilation 2.
        Case(
            input: [1, 6, 14, 10], middle: 8,
            parameters: Conv2DParameters(dilations: (2, 2), padding: (0, 0, 2, 2), groups: 8)),
        // MobileNetV2's 14 × 14 expansion to 384 (groups of 16 across the threads).
        Case(input: [1, 64, 14, 14], middle: 384, parameters: Conv2DParameters(padding: (1, 1, 1, 1), groups: 384)),
    ]

    @Test(
        "an expansion and its depthwise convolution by channel groups give the bits of the two convolutions",
        arguments: channelCases)
    func channelGroupsMatchUnfused(_ c: Case) {
        let middle = c.middle!
        let dwShape = c.parameters.outputShape(
            inputShape: [c.input[0], middle, c.input[2], c.input[3]], weightShape: [middle, 1, c.kernel, c.kernel])
        let (x, we, be, wd, bd) = Self.inputs(c, seed: 11)
        let expected = Self.unfused(c, x: x, we: we, be: be, wd: wd, bd: bd, wp: [], bp: [], r: [])
        #expect(expected.contains { $0.isNaN } && expected.contains { !$0.isNaN }, "\(c)")
        for (group, prepared) in [(8, false), (16, true), (nil, true), (nil, false)] as [(Int?, Bool)] {
            var got = [Float](repeating: 12345, count: dwShape.reduce(1, *))
            got.withUnsafeMutableBufferPointer { out in
                let expand = DepthwiseBlockPointwise(
                    weights: we, outputChannels: middle, inputChannels: c.input[1],
                    packed: prepared
                        ? PackedGEMMOperand(packing: we, lda: c.input[1], rows: middle, depth: c.input[1]) : nil,
                    bias: be, clamp: c.clamp)
                DepthwiseBlock.runByChannels(
                    input: x, inputShape: c.input, expand: expand,
                    depthwise: DepthwiseBlockDepthwise(
                        weights: wd, weightShape: [middle, 1, c.kernel, c.kernel], parameters: c.parameters,
                        bias: bd, clamp: c.clamp),
                    output: out.baseAddress!, groupChannels: group)
            }
            let mismatches = zip(got, expected).filter { $0.bitPattern != $1.bitPattern }.count
            #expect(
                mismatches == 0, "\(c), \(group.map(String.init) ?? "auto") channels per group: \(mismatches) differ")
        }
    }

    static let farCases: [Case] = [
        // MobileNetV2's 14 × 14 block (384 channels) with its residual: two bands of 7 rows.
        Case(
            input: [1, 64, 14, 14], middle: 384, parameters: Conv2DParameters(padding: (1, 1, 1, 1), groups: 384),
            outputs: 64, residual: true),
        // Its 28 × 28 block: more rows than fit one band, so two bands per thread.
        Case(
            input: [1, 32, 28, 28], middle: 192, parameters: Conv2DParameters(padding: (1, 1, 1, 1), groups: 192),
            outputs: 32, residual: true),
        // Stride 2 from 14 × 14 to 7 × 7 (576 channels), bands of 3 and 4 output rows.
        Case(
            input: [1, 96, 14, 14], middle: 576,
            parameters: Conv2DParameters(strides: (2, 2), padding: (1, 1, 1, 1), groups: 576), outputs: 160),
        // Two images of 16 rows, no projection.
        Case(input: [2, 8, 16, 12], middle: 40, parameters: Conv2DParameters(padding: (1, 1, 1, 1), groups: 40)),
    ]

    @Test(
        "blocks that run by channel groups give the same bits in bands of rows when the cores are far apart",
        .enabled(if: KernelThreads.coreBudget > 1, "bands replace channel groups only on several threads"),
        arguments: farCases)
    func farCoresMatchUnfused(_ c: Case) {
        let budget = KernelThreads.coreBudget
        #expect(
            DepthwiseBlock.splitsByChannels(
                hasExpand: true, middleShape: [c.input[0], c.middle!, c.input[2], c.input[3]]))
        #expect(
            DepthwiseBlock.bandsAcrossFarCores(inputRows: c.input[2], budget: budget, coresAreFar: true)
                == (c.input[2] >= DepthwiseBlock.farBandRows * budget))
        let operands = Operands(c, seed: 21)
        for far in [true, false] {
            let mismatches = Self.mismatches(c, operands, preparedExpand: true, coresAreFar: far)
            #expect(mismatches == 0, "\(c), cores \(far ? "far" : "near"): \(mismatches) differ")
        }
    }

    @Test("far cores: bands for blocks with 7 or more input rows per thread, channel groups otherwise")
    func farCoreSplit() {
        #expect(DepthwiseBlock.bandsAcrossFarCores(inputRows: 14, budget: 2, coresAreFar: true))
        #expect(DepthwiseBlock.bandsAcrossFarCores(inputRows: 28, budget: 2, coresAreFar: true))
        #expect(!DepthwiseBlock.bandsAcrossFarCores(inputRows: 14, budget: 2, coresAreFar: false))
        #expect(!DepthwiseBlock.bandsAcrossFarCores(inputRows: 7, budget: 2, coresAreFar: true))
        #expect(!DepthwiseBlock.bandsAcrossFarCores(inputRows: 14, budget: 4, coresAreFar: true))
        #expect(!DepthwiseBlock.bandsAcrossFarCores(inputRows: 28, budget: 1, coresAreFar: true))
    }

    @Test("channel groups: multiples of a panel that fill about 16 KiB; small expansions")
    func channelGroupChoice() {
        #expect(DepthwiseBlock.groupChannels(positions: 14 * 14) == 16)
        #expect(DepthwiseBlock.groupChannels(positions: 7 * 7) == 80)
        #expect(DepthwiseBlock.groupChannels(positions: 28 * 28) == 8)
        #expect(DepthwiseBlock.groupChannels(positions: 112 * 112) == 8)
        #expect(DepthwiseBlock.splitsByChannels(hasExpand: true, middleShape: [1, 384, 14, 14]))
        #expect(!DepthwiseBlock.splitsByChannels(hasExpand: false, middleShape: [1, 384, 14, 14]))
        // 96 × 112 × 112 floats: bands of rows.
        #expect(!DepthwiseBlock.splitsByChannels(hasExpand: true, middleShape: [1, 96, 112, 112]))
    }

    @Test("which blocks fuse: large blocks, small expansions with the stages after them; not multipliers")
    func fuses() {
        let same = Conv2DParameters()
        let dw96s2 = Conv2DParameters(strides: (2, 2), padding: (1, 1, 1, 1), groups: 96)
        // MobileNetV2's second block: [1, 16, 112, 112] → 96 → stride 2 → 24.
        #expect(
            DepthwiseBlock.fuses(
                inputShape: [1, 16, 112, 112], expand: ([96, 16, 1, 1], same), depthwiseWeightShape: [96, 1, 3, 3],
                depthwiseParameters: dw96s2, project: ([24, 96, 1, 1], same)))
        // Its first: depthwise 32 at 112 × 112, then the projection to 16.
        #expect(
            DepthwiseBlock.fuses(
                inputShape: [1, 32, 112, 112], expand: nil, depthwiseWeightShape: [32, 1, 3, 3],
                depthwiseParameters: Conv2DParameters(padding: (1, 1, 1, 1), groups: 32),
                project: ([16, 32, 1, 1], same)))
        // A 28 × 28 block: 192 × 28 × 28 floats between stages is under the threshold for bands;
        // the expansion and the depthwise stage fuse by channel groups, the projection after them.
        let dw192 = Conv2DParameters(padding: (1, 1, 1, 1), groups: 192)
        #expect(
            DepthwiseBlock.fuses(
                inputShape: [1, 32, 28, 28], expand: ([192, 32, 1, 1], same), depthwiseWeightShape: [192, 1, 3, 3],
                depthwiseParameters: dw192, project: ([32, 192, 1, 1], same)))
        #expect(
            DepthwiseBlock.fuses(
                inputShape: [1, 32, 28, 28], expand: ([192, 32, 1, 1], same), depthwiseWeightShape: [192, 1, 3, 3],
                depthwiseParameters: dw192, project: nil))
        // The small depthwise stage and its projection do not.
        #expect(
            !DepthwiseBlock.fuses(
                inputShape: [1, 192, 28, 28], expand: nil, depthwiseWeightShape: [192, 1, 3, 3],
                depthwiseParameters: dw192, project: ([32, 192, 1, 1], same)))
        // Neither pointwise stage.
        #expect(
            !DepthwiseBlock.fuses(
                inputShape: [1, 96, 112, 112], expand: nil, depthwiseWeightShape: [96, 1, 3, 3],
                depthwiseParameters: dw96s2, project: nil))
        // A depth multiplier of 2 (192 kernels over 96 channels).
        #expect(
            !DepthwiseBlock.fuses(
                inputShape: [1, 16, 112, 112], expand: ([96, 16, 1, 1], same), depthwiseWeightShape: [192, 1, 3, 3],
                depthwiseParameters: dw96s2, project: nil))
        // An expansion that is not 1 × 1.
        #expect(
            !DepthwiseBlock.fuses(
                inputShape: [1, 16, 112, 112], expand: ([96, 16, 3, 3], Conv2DParameters(padding: (1, 1, 1, 1))),
                depthwiseWeightShape: [96, 1, 3, 3], depthwiseParameters: dw96s2, project: nil))
        // A projection whose channels do not match.
        #expect(
            !DepthwiseBlock.fuses(
                inputShape: [1, 16, 112, 112], expand: ([96, 16, 1, 1], same), depthwiseWeightShape: [96, 1, 3, 3],
                depthwiseParameters: dw96s2, project: ([24, 48, 1, 1], same)))
        // MobileNetV2's first layer before its first block: [1, 3, 224, 224] → 32, 3 × 3 stride 2.
        let firstLayer = ([32, 3, 3, 3], Conv2DParameters(strides: (2, 2), padding: (1, 1, 1, 1)))
        let dw32 = Conv2DParameters(padding: (1, 1, 1, 1), groups: 32)
        #expect(
            DepthwiseBlock.fuses(
                inputShape: [1, 3, 224, 224], expand: firstLayer, depthwiseWeightShape: [32, 1, 3, 3],
                depthwiseParameters: dw32, project: ([16, 32, 1, 1], same)))
        // Not with a small image: a first layer runs in bands only.
        #expect(
            !DepthwiseBlock.fuses(
                inputShape: [1, 3, 64, 64], expand: firstLayer, depthwiseWeightShape: [32, 1, 3, 3],
                depthwiseParameters: dw32, project: ([16, 32, 1, 1], same)))
    }

    /// An image model's first layer as the block's first stage: input `[N, 3, H, W]`, a
    /// `kernel × kernel` convolution with `first`, `middle` channels, a depthwise 3 × 3 with
    /// `parameters`, a projection to `outputs` channels (or none).
    struct FirstLayerCase: CustomStringConvertible {
        var input: [Int]
        var kernel = 3
        var first: Conv2DParameters
        var middle: Int
        var parameters: Conv2DParameters
        var outputs: Int?

        var description: String {
            "\(input) → first \(kernel)×\(kernel) \(first) → \(middle) → dw \(parameters) → "
                + "\(outputs.map(String.init) ?? "-")"
        }
    }

    static let firstLayerCases: [FirstLayerCase] = [
        // MobileNetV2's start at a quarter of the size, two images.
        FirstLayerCase(
            input: [2, 3, 64, 48], first: Conv2DParameters(strides: (2, 2), padding: (1, 1, 1, 1)), middle: 16,
            parameters: Conv2DParameters(padding: (1, 1, 1, 1), groups: 16), outputs: 8),
        // Stride 1, no projection, a stride-2 depthwise stage on odd sizes.
        FirstLayerCase(
            input: [1, 3, 37, 41], first: Conv2DParameters(padding: (1, 1, 1, 1)), middle: 8,
            parameters: Conv2DParameters(strides: (2, 2), padding: (1, 1, 1, 1), groups: 8)),
        // Four channels, a 5 × 5 kernel, stride 2 without padding.
        FirstLayerCase(
            input: [1, 4, 71, 70], kernel: 5, first: Conv2DParameters(strides: (2, 2)), middle: 12,
            parameters: Conv2DParameters(padding: (1, 1, 1, 1), groups: 12), outputs: 6),
    ]

    @Test("a first layer in the bands gives the bits of its three convolutions", arguments: firstLayerCases)
    func firstLayerMatchesUnfused(_ c: FirstLayerCase) {
        let channels = c.input[1]
        let firstWeight = [c.middle, channels, c.kernel, c.kernel]
        let middleShape = c.first.outputShape(inputShape: c.input, weightShape: firstWeight)
        #expect(DepthwiseBlockDirect.fuses(inputShape: c.input, weightShape: firstWeight, parameters: c.first))
        let dwWeight = [c.middle, 1, 3, 3]
        let dwShape = c.parameters.outputShape(inputShape: middleShape, weightShape: dwWeight)
        let outputs = c.outputs ?? c.middle
        let outShape = [dwShape[0], outputs, dwShape[2], dwShape[3]]
        var x = Self.values(c.input.reduce(1, *), seed: 21)
        x[5] = .nan
        let w1 = Self.values(firstWeight.reduce(1, *), seed: 22)
        let b1 = Self.values(c.middle, seed: 23)
        let wd = Self.values(c.middle * 9, seed: 24)
        let bd = Self.values(c.middle, seed: 25)
        let wp = Self.values(outputs * c.middle, seed: 26)
        let bp = Self.values(outputs, seed: 27)
        let clamp = ConvolutionClamp(lower: 0, upper: 6)
        var expected = Self.conv(x, c.input, w1, firstWeight, b1, c.first, nil, clamp)
        expected = Self.conv(expected, middleShape, wd, dwWeight, bd, c.parameters, nil, clamp)
        if c.outputs != nil {
            expected = Self.conv(expected, dwShape, wp, [outputs, c.middle, 1, 1], bp, Conv2DParameters(), nil, .none)
        }
        #expect(expected.contains { $0.isNaN } && expected.contains { !$0.isNaN && $0 != 0 }, "\(c)")
        for (bandRows, prepared) in [(1, false), (2, true), (3, false), (5, true), (nil, true)] as [(Int?, Bool)] {
            var got = [Float](repeating: 12345, count: outShape.reduce(1, *))
            got.withUnsafeMutableBufferPointer { out in
                let direct = DepthwiseBlockDirect(
                    weights: w1, weightShape: firstWeight, parameters: c.first,
                    packed: prepared
                        ? PackedGEMMOperand(
                            packing: w1, lda: channels * c.kernel * c.kernel, rows: c.middle,
                            depth: channels * c.kernel * c.kernel) : nil,
                    bias: b1, clamp: clamp)
                let project = c.outputs.map { o in
                    DepthwiseBlockPointwise(
                        weights: wp, outputChannels: o, inputChannels: c.middle, packed: nil, bias: bp, clamp: .none)
                }
                DepthwiseBlock.run(
                    input: x, inputShape: c.input, expand: nil, direct: direct,
                    depthwise: DepthwiseBlockDepthwise(
                        weights: wd, weightShape: dwWeight, parameters: c.parameters, bias: bd, clamp: clamp),
                    project: project, residual: nil, output: out.baseAddress!, bandRows: bandRows)
            }
            let mismatches = zip(got, expected).filter { $0.bitPattern != $1.bitPattern }.count
            #expect(mismatches == 0, "\(c), band rows \(bandRows.map(String.init) ?? "auto"): \(mismatches) differ")
        }
    }
}
