import TesseraGraph
import TesseraKernels
import Testing

/// ``ConvolutionMeanFusion``: a pointwise convolution, its epilogue and the global average pool
/// after it become one `convMean` step with the bits of the convolution and the mean run as
/// their own steps.
@Suite(
    "Planner: convolutions with their global mean",
    .enabled(if: PackedGEMM.isPreferred, "the fused pool runs on the packed micro-kernel"))
struct ConvolutionMeanFusionTests {
    /// `[1, 24, 7, 7]` → 200 channels.
    static let (channels, outputs, size) = (24, 200, 7)

    static func input(seed: UInt64 = 20) -> Node {
        constant(seededValues(channels * size * size, seed: seed), [1, channels, size, size])
    }

    /// A convolution of `x` (1 × 1 unless `kernel` is given, padded to keep the size).
    static func conv(_ x: Node, kernel: Int = 1) -> Node {
        let weight = constant(
            seededValues(outputs * channels * kernel * kernel, seed: 21).map { $0 / 4 },
            [outputs, channels, kernel, kernel])
        let pad = kernel / 2
        return Node(
            .conv2d(Conv2DParameters(padding: (pad, pad, pad, pad))),
            inputs: [x, weight, constant(seededValues(outputs, seed: 22), [outputs])])
    }

    /// `min(max(x, lower), 6)`, or with the lower bound written on the left.
    static func relu6(_ x: Node, lower: Node = constant([0], []), lowerOnLeft: Bool = false) -> Node {
        let low = Node(.binary(.max), inputs: lowerOnLeft ? [lower, x] : [x, lower])
        return Node(.binary(.min), inputs: [low, constant([6], [])])
    }

    static func mean(_ x: Node, axes: [Int] = [2, 3]) -> Node { Node(.reduce(.mean, axes: axes), inputs: [x]) }

    @Test("conv → relu6 → global mean is one step, with the bits of the convolution and the mean")
    func fusesBitForBit() {
        let x = Self.input()
        let fused = Self.mean(Self.relu6(Self.conv(x)))
        #expect(GraphExecutor.describePlan([fused]).steps == [.convMean])
        let stats = GraphExecutor.materialize([fused])
        #expect(stats.kernels == 1 && stats.fusedGroups == 0 && stats.convEpilogues == 1, "\(stats)")
        // Asking for the clamped convolution keeps it a step of its own.
        let activation = Self.relu6(Self.conv(x))
        let plain = Self.mean(activation)
        #expect(GraphExecutor.describePlan([plain, activation]).steps == [.convEpilogue, .kernel])
        GraphExecutor.materialize([plain, activation])
        let (got, unfused) = (floats(fused), floats(plain))
        #expect(got.count == Self.outputs && got.map(\.bitPattern) == unfused.map(\.bitPattern))
        #expect(got.contains { $0 != 0 } && !got.contains { $0.isNaN })
    }

    @Test("a bare convolution, and one with a residual, fuse with their mean; both agree with Double")
    func bareAndResidual() {
        let x = Self.input()
        let bare = Self.mean(Self.conv(x))
        let residual = constant(seededValues(Self.outputs * 49, seed: 23), [1, Self.outputs, 7, 7])
        let withResidual = Self.mean(Self.relu6(Node(.binary(.add), inputs: [Self.conv(x), residual])))
        #expect(GraphExecutor.describePlan([bare]).steps == [.convMean])
        #expect(GraphExecutor.describePlan([withResidual]).steps == [.convMean])
        let expected = (NaiveGraph.evaluate(bare), NaiveGraph.evaluate(withResidual))
        GraphExecutor.materialize([bare, withResidual])
        expectClose(elements(bare), expected.0, "bare")
        expectClose(elements(withResidual), expected.1, "residual")
    }

    @Test("not fused: other axes, a 3 × 3 convolution, a second reader, a bound on the left")
    func notFused() {
        let x = Self.input()
        let separate: [PlanDescription.StepKind] = [.convEpilogue, .kernel]
        for axes in [[3], [1, 2, 3]] {
            let pooled = Self.mean(Self.relu6(Self.conv(x)), axes: axes)
            #expect(GraphExecutor.describePlan([pooled]).steps == separate, "axes \(axes)")
        }
        let threeByThree = Self.mean(Self.relu6(Self.conv(x, kernel: 3)))
        #expect(GraphExecutor.describePlan([threeByThree]).steps == separate)
        let activation = Self.relu6(Self.conv(x))
        let twice = GraphExecutor.describePlan([Self.mean(activation), Self.mean(activation, axes: [3])])
        #expect(twice.steps == separate + [.kernel], "\(twice)")
        let left = Self.mean(Self.relu6(Self.conv(x), lowerOnLeft: true))
        #expect(GraphExecutor.describePlan([left]).steps == separate)
    }

    @Test("a NaN bound read at run time runs the convolution and the mean as their own steps would")
    func nanBoundAtRunTime() {
        let x = Self.input()
        let fused = Self.mean(Self.relu6(Self.conv(x), lower: constant([.nan], [])))
        #expect(GraphExecutor.describePlan([fused]).steps == [.convMean])
        GraphExecutor.materialize([fused])
        let activation = Self.relu6(Self.conv(x), lower: constant([.nan], []))
        let plain = Self.mean(activation)
        GraphExecutor.materialize([plain, activation])
        #expect(floats(fused).map(\.bitPattern) == floats(plain).map(\.bitPattern))
        #expect(floats(fused).allSatisfy { $0.isNaN })
    }
}
