import TesseraGraph
import TesseraKernels
import Testing

/// ``ConvolutionEpilogueFusion``: a residual add and a clip, ReLU or ReLU6 reading only a
/// convolution run inside the convolution kernel, with their operands either way round.
@Suite("Planner: convolution epilogues")
struct ConvolutionEpilogueTests {
    /// Input, weight and bias of a convolution with `channels` → `outputs` channels. Output
    /// channel 0 has bias `-0` and weights `-0` (so its outputs are `-0`, which a clamp at 0 must
    /// keep), and one input is NaN.
    static func operands(channels: Int, outputs: Int, kernel: Int, size: Int, depthwise: Bool)
        -> (x: Node, w: Node, b: Node)
    {
        let perOutput = (depthwise ? 1 : channels) * kernel * kernel
        var x = (0..<(channels * size * size)).map { Float(($0 * 37) % 23) / 7 }
        x[5] = .nan
        var w = (0..<(outputs * perOutput)).map { Float(($0 * 11) % 13) / 6 - 1 }
        for k in 0..<perOutput { w[k] = -0.0 }
        var b = (0..<outputs).map { Float($0 % 5) - 2 }
        b[0] = -0.0
        return (
            constant(x, [1, channels, size, size]),
            constant(w, [outputs, depthwise ? 1 : channels, kernel, kernel]), constant(b, [outputs])
        )
    }

    static let configurations:
        [(name: String, channels: Int, outputs: Int, kernel: Int, parameters: Conv2DParameters)] =
            [
                ("depthwise 3×3", 4, 4, 3, Conv2DParameters(padding: (1, 1, 1, 1), groups: 4)),
                (
                    "depthwise 3×3 stride 2", 4, 4, 3,
                    Conv2DParameters(strides: (2, 2), padding: (1, 1, 1, 1), groups: 4)
                ),
                ("pointwise", 3, 5, 1, Conv2DParameters()),
                ("3×3 im2col", 3, 5, 3, Conv2DParameters(padding: (1, 1, 1, 1))),
            ]

    /// `clip`, `relu6` and `relu` as MIL lowers them (the convolution on the left of `max`, then
    /// `min`), and with bounds on the left, which `max` and `min` accept either way round.
    /// `keepsNegativeZero` is false where a zero bound on the left turns a `-0` output into `+0`.
    static func activations(_ conv: Node) -> [(name: String, node: Node, keepsNegativeZero: Bool)] {
        let zero = constant([0], [])
        let six = constant([6], [])
        func max(_ a: Node, _ b: Node) -> Node { Node(.binary(.max), inputs: [a, b]) }
        func min(_ a: Node, _ b: Node) -> Node { Node(.binary(.min), inputs: [a, b]) }
        return [
            ("relu6", min(max(conv, zero), six), true),
            ("relu", max(conv, zero), true),
            ("min only", min(conv, constant([0.5], [])), true),
            ("clip(-0.25, 0.75)", min(max(conv, constant([-0.25], [])), constant([0.75], [])), true),
            ("relu, bound on the left", max(zero, conv), false),
            ("relu6, both bounds on the left", min(six, max(zero, conv)), false),
            ("min only, bound on the left", min(constant([0.5], []), conv), true),
            (
                "clip(-0.25, 0.75), lower bound on the left",
                min(max(constant([-0.25], []), conv), constant([0.75], [])), true
            ),
            ("clip(0, 0.75), upper bound on the left", min(constant([0.75], []), max(conv, zero)), true),
        ]
    }

    @Test("conv then clip/relu/relu6 runs as one kernel step with the unfused result's bits")
    func fusesBitForBit() {
        for c in Self.configurations {
            for k in 0..<Self.activations(constant([0], [])).count {
                let (x, w, b) = Self.operands(
                    channels: c.channels, outputs: c.outputs, kernel: c.kernel, size: 9,
                    depthwise: c.parameters.groups > 1)
                // Fused: only the activation is requested.
                let fusedConv = Node(.conv2d(c.parameters), inputs: [x, w, b])
                let (name, fused, keepsNegativeZero) = Self.activations(fusedConv)[k]
                let expected = NaiveGraph.evaluate(fused)
                #expect(GraphExecutor.describePlan([fused]).steps == [.convEpilogue], "\(c.name) \(name)")
                let stats = GraphExecutor.materialize([fused])
                expectClose(elements(fused), expected, "\(c.name) \(name)")
                #expect(
                    stats.kernels == 1 && stats.convEpilogues == 1 && stats.fusedGroups == 0,
                    "\(c.name) \(name): \(stats)")
                // Unfused: the convolution is requested too, so the activation is a fused program.
                let conv = Node(.conv2d(c.parameters), inputs: [x, w, b])
                let plain = Self.activations(conv)[k].node
                let plainStats = GraphExecutor.materialize([plain, conv])
                #expect(plainStats.kernels == 2 && plainStats.convEpilogues == 0, "\(c.name) \(name): \(plainStats)")
                let (got, unfused) = (floats(fused), floats(plain))
                #expect(
                    got.map(\.bitPattern) == unfused.map(\.bitPattern), "\(c.name) \(name): \(got) vs \(unfused)")
                // The depthwise sums start at the bias, so channel 0 stays -0 (BLAS starts at +0),
                // unless a zero bound on the left makes it +0.
                let hasNegativeZero = got.contains { $0 == 0 && $0.sign == .minus }
                #expect(got.contains { $0.isNaN }, "\(c.name) \(name)")
                if c.parameters.groups > 1 {
                    #expect(hasNegativeZero == keepsNegativeZero, "\(c.name) \(name)")
                } else if !keepsNegativeZero {
                    #expect(!hasNegativeZero, "\(c.name) \(name)")
                }
            }
        }
    }

    /// Residual connections as MIL lowers them: `add(conv, r)`, `add(r, conv)`, and ResNet's
    /// `relu(add(conv, r))`, also with the bound on the left.
    static func residuals(_ conv: Node, _ r: Node) -> [(name: String, node: Node)] {
        [
            ("conv + r", Node(.binary(.add), inputs: [conv, r])),
            ("r + conv", Node(.binary(.add), inputs: [r, conv])),
            (
                "relu(conv + r)",
                Node(.binary(.max), inputs: [Node(.binary(.add), inputs: [conv, r]), constant([0], [])])
            ),
            (
                "relu(r + conv), bound on the left",
                Node(.binary(.max), inputs: [constant([0], []), Node(.binary(.add), inputs: [r, conv])])
            ),
        ]
    }

    @Test("conv then a residual add (and a clamp) runs as one kernel step with the unfused result's bits")
    func residualFusesBitForBit() {
        for c in Self.configurations {
            for k in 0..<Self.residuals(constant([0], []), constant([0], [])).count {
                let (x, w, b) = Self.operands(
                    channels: c.channels, outputs: c.outputs, kernel: c.kernel, size: 9,
                    depthwise: c.parameters.groups > 1)
                let shape = c.parameters.outputShape(
                    inputShape: [1, c.channels, 9, 9],
                    weightShape: [c.outputs, c.parameters.groups > 1 ? 1 : c.channels, c.kernel, c.kernel])
                var values = (0..<shape.reduce(1, *)).map { Float(($0 * 29) % 17) / 5 - 1.7 }
                values[3] = .nan
                // The residual through a permute of a permute: a view, not contiguous until compacted.
                let r = Node(
                    .permute([0, 1, 3, 2]), inputs: [constant(values, [shape[0], shape[1], shape[3], shape[2]])])
                let fusedConv = Node(.conv2d(c.parameters), inputs: [x, w, b])
                let (name, fused) = Self.residuals(fusedConv, r)[k]
                let expected = NaiveGraph.evaluate(fused)
                // The residual's permute is a view of its own.
                #expect(GraphExecutor.describePlan([fused]).steps == [.view, .convEpilogue], "\(c.name) \(name)")
                let stats = GraphExecutor.materialize([fused])
                expectClose(elements(fused), expected, "\(c.name) \(name)")
                #expect(
                    stats.convEpilogues == 1 && stats.fusedGroups == 0, "\(c.name) \(name): \(stats)")
                let conv = Node(.conv2d(c.parameters), inputs: [x, w, b])
                let plain = Self.residuals(conv, r)[k].node
                let plainStats = GraphExecutor.materialize([plain, conv])
                #expect(plainStats.convEpilogues == 0, "\(c.name) \(name): \(plainStats)")
                let (got, unfused) = (floats(fused), floats(plain))
                #expect(
                    got.map(\.bitPattern) == unfused.map(\.bitPattern), "\(c.name) \(name): \(got) vs \(unfused)")
            }
        }
    }

    @Test("a convolution without a bias takes its epilogue too")
    func withoutBias() {
        let (x, w, _) = Self.operands(channels: 3, outputs: 5, kernel: 3, size: 9, depthwise: false)
        let conv = Node(.conv2d(Conv2DParameters(padding: (1, 1, 1, 1))), inputs: [x, w])
        let y = Node(.binary(.max), inputs: [constant([0], []), conv])
        let (plan, stats) = planAndCheck([y])
        #expect(plan.steps == [.convEpilogue] && stats.convEpilogues == 1, "\(plan)")
    }

    @Test("not fused: a residual that broadcasts")
    func broadcastResidualNotFused() {
        let (x, w, b) = Self.operands(channels: 4, outputs: 4, kernel: 3, size: 9, depthwise: true)
        let conv = Node(.conv2d(Conv2DParameters(padding: (1, 1, 1, 1), groups: 4)), inputs: [x, w, b])
        let sum = Node(.binary(.add), inputs: [conv, constant([1, 2, 3, 4], [1, 4, 1, 1])])
        let stats = GraphExecutor.materialize([sum])
        #expect(stats.kernels == 2 && stats.convEpilogues == 0, "\(stats)")
    }

    @Test("the bounds are read when the plan runs: a cached plan with other constants clamps to them")
    func boundsAtRunTime() {
        func build(_ lo: Float, _ hi: Float) -> Node {
            let (x, w, b) = Self.operands(channels: 4, outputs: 4, kernel: 3, size: 9, depthwise: true)
            let conv = Node(.conv2d(Conv2DParameters(padding: (1, 1, 1, 1), groups: 4)), inputs: [x, w, b])
            return Node(
                .binary(.min), inputs: [Node(.binary(.max), inputs: [conv, constant([lo], [])]), constant([hi], [])])
        }
        let second = build(-0.5, 0.5)
        let stats = GraphExecutor.withPlanCache {
            GraphExecutor.materialize([build(0, 6)])
            return GraphExecutor.materialize([second])
        }
        #expect(stats.planCacheHit && stats.convEpilogues == 1, "\(stats)")
        let values = floats(second).filter { !$0.isNaN }
        #expect(values.allSatisfy { $0 >= -0.5 && $0 <= 0.5 } && values.contains(-0.5) && values.contains(0.5))
    }

    @Test(
        "a clamp read only by a global pool is the convolution's epilogue, not streamed into the pool (on the packed route the pool runs with it)"
    )
    func clampBeforeGlobalPool() {
        let (x, w, b) = Self.operands(channels: 3, outputs: 5, kernel: 1, size: 9, depthwise: false)
        let conv = Node(.conv2d(Conv2DParameters()), inputs: [x, w, b])
        let clamped = Node(
            .binary(.min), inputs: [Node(.binary(.max), inputs: [conv, constant([0], [])]), constant([6], [])])
        let pooled = Node(.reduce(.mean, axes: [2, 3]), inputs: [clamped])
        let (plan, stats) = planAndCheck([pooled])
        // `ConvolutionMeanFusion` then takes the pool into the convolution's step where the packed
        // micro-kernel runs it.
        let expected: [PlanDescription.StepKind] = PackedGEMM.isPreferred ? [.convMean] : [.convEpilogue, .kernel]
        #expect(plan.steps == expected && stats.convEpilogues == 1, "\(plan)")
    }

    @Test("not fused: a bound of more than one element, a second reader of the convolution")
    func notFused() {
        let (x, w, b) = Self.operands(channels: 4, outputs: 4, kernel: 3, size: 9, depthwise: true)
        let parameters = Conv2DParameters(padding: (1, 1, 1, 1), groups: 4)
        let conv = Node(.conv2d(parameters), inputs: [x, w, b])
        let perChannel = Node(.binary(.max), inputs: [constant([0, 1, 0, 1], [1, 4, 1, 1]), conv])
        let (plan, stats) = planAndCheck([perChannel])
        #expect(plan.steps == [.kernel, .fused] && stats.convEpilogues == 0, "\(plan)")

        let shared = Node(.conv2d(parameters), inputs: [x, w, b])
        let relu = Node(.binary(.max), inputs: [shared, constant([0], [])])
        let doubled = Node(.binary(.add), inputs: [shared, shared])
        let sum = Node(.binary(.add), inputs: [relu, Node(.reduce(.sum, axes: [3]), inputs: [doubled])])
        let (sharedPlan, sharedStats) = planAndCheck([sum])
        #expect(!sharedPlan.steps.contains(.convEpilogue) && sharedStats.convEpilogues == 0, "\(sharedPlan)")
    }
}
