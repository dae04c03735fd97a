import TesseraGraph
import TesseraKernels
import Testing

/// ``DepthwiseBlockFusion``: MobileNet's expand → depthwise → project blocks become one
/// `depthwiseBlock` step with the bits of the convolutions run one by one.
@Suite(
    "Planner: depthwise blocks",
    .enabled(if: PackedGEMM.isPreferred && DepthwiseBlock.isEnabled, "blocks fuse with the AVX-512 micro-kernel"))
struct DepthwiseBlockFusionTests {
    /// `[1, 8, 128, 128]` → 16 channels (1 MiB between the stages) → depthwise 3 × 3 → 8.
    static let (channels, middle, size) = (8, 16, 128)

    static func relu6(_ x: Node) -> Node {
        Node(.binary(.min), inputs: [Node(.binary(.max), inputs: [x, constant([0], [])]), constant([6], [])])
    }

    static func weights(_ count: Int, _ shape: [Int], seed: UInt64) -> Node {
        constant(seededValues(count, seed: seed).map { $0 / 4 }, shape)
    }

    /// The block's three stages on `x`; `stride` for the depthwise convolution. Each stage is
    /// returned so a test can ask for it.
    /// The block's weights and biases: `[16, 8, 1, 1]`, `[16]`, `[16, 1, 3, 3]`, `[16]`,
    /// `[8, 16, 1, 1]`, `[8]`, seeded from `seed` on.
    static func blockWeights(seed: UInt64 = 11) -> [Node] {
        let (c, m) = (channels, middle)
        return [
            weights(m * c, [m, c, 1, 1], seed: seed), weights(m, [m], seed: seed + 1),
            weights(m * 9, [m, 1, 3, 3], seed: seed + 2), weights(m, [m], seed: seed + 3),
            weights(c * m, [c, m, 1, 1], seed: seed + 4), weights(c, [c], seed: seed + 5),
        ]
    }

    static func block(
        _ x: Node, stride: Int = 1, residual: Bool = true, lower: Node? = nil, weights w: [Node] = blockWeights()
    ) -> (expand: Node, depthwise: Node, output: Node) {
        let m = middle
        let expandConv = Node(
            .conv2d(Conv2DParameters()),
            inputs: [x, w[0], w[1]])
        let expand = relu6(expandConv)
        let dwConv = Node(
            .conv2d(Conv2DParameters(strides: (stride, stride), padding: (1, 1, 1, 1), groups: m)),
            inputs: [expand, w[2], w[3]])
        let depthwise =
            lower.map { Node(.binary(.min), inputs: [Node(.binary(.max), inputs: [dwConv, $0]), constant([6], [])]) }
            ?? relu6(dwConv)
        let project = Node(
            .conv2d(Conv2DParameters()),
            inputs: [depthwise, w[4], w[5]])
        let output = residual && stride == 1 ? Node(.binary(.add), inputs: [project, x]) : project
        return (expand, depthwise, output)
    }

    static func input() -> Node {
        weights(channels * size * size, [1, channels, size, size], seed: 10)
    }

    @Test("expand → depthwise → project + residual is one step, with the bits of the three convolutions")
    func fusesBitForBit() {
        for stride in [1, 2] {
            let x = Self.input()
            let fused = Self.block(x, stride: stride).output
            #expect(GraphExecutor.describePlan([fused]).steps == [.depthwiseBlock], "stride \(stride)")
            let stats = GraphExecutor.materialize([fused])
            // The projection of the stride-2 block has no residual and no clamp: no epilogue.
            #expect(
                stats.kernels == 1 && stats.fusedGroups == 0 && stats.convEpilogues == (stride == 1 ? 3 : 2),
                "\(stats)")
            // Asking for the expansion and the depthwise result keeps every stage a step of its own.
            let plain = Self.block(x, stride: stride)
            let plainPlan = GraphExecutor.describePlan([plain.output, plain.expand, plain.depthwise])
            #expect(!plainPlan.steps.contains(.depthwiseBlock), "\(plainPlan)")
            GraphExecutor.materialize([plain.output, plain.expand, plain.depthwise])
            let (got, unfused) = (floats(fused), floats(plain.output))
            let mismatches = zip(got, unfused).filter { $0.bitPattern != $1.bitPattern }.count
            #expect(mismatches == 0, "stride \(stride): \(mismatches) of \(got.count) differ")
            #expect(got.contains { $0 != 0 } && !got.contains { $0.isNaN })
        }
    }

    @Test("a plan run again takes the weights of that run: other weights, then the same ones with another input")
    func operandsFollowTheWeights() {
        // One plan (one cache scope) runs three times: weights A, weights B (other storages of
        // the same shapes: its memo of A's operands must not be used), then A's storages again
        // with another input (the memo of A's operands holds). Each agrees bit for bit with the
        // same block run stage by stage, another plan.
        let (a, b) = (Self.blockWeights(seed: 11), Self.blockWeights(seed: 31))
        let inputs = [
            Self.input(), Self.input(),
            Self.weights(
                Self.channels * Self.size * Self.size,
                [1, Self.channels, Self.size, Self.size], seed: 40),
        ]
        let runs = [(inputs[0], a), (inputs[1], b), (inputs[2], a)]
        let fused = runs.map { Self.block($0.0, weights: $0.1).output }
        let hits = GraphExecutor.withPlanCache { fused.map { GraphExecutor.materialize([$0]).planCacheHit } }
        #expect(hits == [false, true, true], "\(hits)")
        for (index, (x, w)) in runs.enumerated() {
            let plain = Self.block(x, weights: w)
            GraphExecutor.materialize([plain.output, plain.expand, plain.depthwise])
            let (got, unfused) = (floats(fused[index]), floats(plain.output))
            let mismatches = zip(got, unfused).filter { $0.bitPattern != $1.bitPattern }.count
            #expect(mismatches == 0, "run \(index): \(mismatches) of \(got.count) differ")
        }
        #expect(floats(fused[0]) != floats(fused[1]) && floats(fused[0]) != floats(fused[2]))
    }

    @Test("the fused block agrees with the graph evaluated in Double")
    func matchesNaiveEvaluation() {
        let y = Self.block(Self.input(), stride: 2).output
        let expected = NaiveGraph.evaluate(y)
        GraphExecutor.materialize([y])
        expectClose(elements(y), expected, "stride-2 block")
    }

    @Test("two stages fuse when the third cannot: a projection read twice, an expansion asked for")
    func partialBlocks() {
        let x = Self.input()
        let b = Self.block(x, residual: false)
        // The depthwise result has a second reader: expand + depthwise fuse, the projection does not.
        let other = Node(.reduce(.sum, axes: [1, 2, 3]), inputs: [b.depthwise])
        let plan = GraphExecutor.describePlan([b.output, other])
        #expect(plan.steps == [.depthwiseBlock, .kernel, .kernel], "\(plan)")
        #expect(plan.kernelOps.first?.hasPrefix("conv2d") == true, "\(plan)")
        // The expansion is asked for: depthwise + project fuse (the depthwise input is 1 MiB).
        let c = Self.block(Self.input(), residual: false)
        let plan2 = GraphExecutor.describePlan([c.output, c.expand])
        #expect(plan2.steps == [.convEpilogue, .depthwiseBlock], "\(plan2)")
        GraphExecutor.materialize([c.output, c.expand])
        let d = Self.block(Self.input(), residual: false)
        GraphExecutor.materialize([d.output, d.expand, d.depthwise])
        #expect(floats(c.output).map(\.bitPattern) == floats(d.output).map(\.bitPattern))
    }

    @Test("small tensors between the stages: one step, the projection after the channel groups")
    func smallBlock() {
        let small = Node(
            .slice(starts: [0, 0, 0, 0], steps: [1, 1, 1, 1], counts: [1, Self.channels, 32, 32]),
            inputs: [Self.input()])
        let fused = Self.block(small).output
        let plan = GraphExecutor.describePlan([fused])
        #expect(plan.steps.filter { $0 != .view } == [.depthwiseBlock], "\(plan)")
        GraphExecutor.materialize([fused])
        let plain = Self.block(small)
        GraphExecutor.materialize([plain.output, plain.expand, plain.depthwise])
        let (got, unfused) = (floats(fused), floats(plain.output))
        #expect(got.map(\.bitPattern) == unfused.map(\.bitPattern))
        #expect(got.contains { $0 != 0 } && !got.contains { $0.isNaN })
    }

    @Test("an image model's first layer fuses as the block's first stage, with the bits of the three convolutions")
    func firstLayer() {
        // [1, 3, 128, 128] → 16 channels 3 × 3 (1 MiB after it) → depthwise 3 × 3 → 8.
        let image = constant(seededValues(3 * 128 * 128, seed: 30), [1, 3, 128, 128])
        func block() -> (first: Node, output: Node) {
            let firstConv = Node(
                .conv2d(Conv2DParameters(padding: (1, 1, 1, 1))),
                inputs: [image, Self.weights(16 * 27, [16, 3, 3, 3], seed: 31), Self.weights(16, [16], seed: 32)])
            let first = Self.relu6(firstConv)
            let dwConv = Node(
                .conv2d(Conv2DParameters(padding: (1, 1, 1, 1), groups: 16)),
                inputs: [first, Self.weights(16 * 9, [16, 1, 3, 3], seed: 33), Self.weights(16, [16], seed: 34)])
            let project = Node(
                .conv2d(Conv2DParameters()),
                inputs: [
                    Self.relu6(dwConv), Self.weights(8 * 16, [8, 16, 1, 1], seed: 35), Self.weights(8, [8], seed: 36),
                ])
            return (first, project)
        }
        let fused = block().output
        #expect(GraphExecutor.describePlan([fused]).steps == [.depthwiseBlock])
        GraphExecutor.materialize([fused])
        // Asking for the first layer's output keeps it a step of its own.
        let plain = block()
        #expect(GraphExecutor.describePlan([plain.output, plain.first]).steps == [.convEpilogue, .depthwiseBlock])
        GraphExecutor.materialize([plain.output, plain.first])
        let (got, unfused) = (floats(fused), floats(plain.output))
        #expect(got.map(\.bitPattern) == unfused.map(\.bitPattern))
        #expect(got.contains { $0 != 0 } && !got.contains { $0.isNaN })
    }

    @Test("not fused: a bound written on the left")
    func notFused() {
        let x = Self.input()
        let b = Self.block(x, residual: false)
        let left = Node(.binary(.max), inputs: [constant([0], []), b.output])
        // The left bound is on the projection's epilogue: that stage stays out, the others fuse.
        let plan2 = GraphExecutor.describePlan([left])
        #expect(plan2.steps == [.depthwiseBlock, .convEpilogue], "\(plan2)")
    }

    @Test("a NaN bound read at run time runs the stages one by one, as their own steps would")
    func nanBoundAtRunTime() {
        let x = Self.input()
        let fused = Self.block(x, residual: false, lower: constant([.nan], [])).output
        #expect(GraphExecutor.describePlan([fused]).steps == [.depthwiseBlock])
        GraphExecutor.materialize([fused])
        let plain = Self.block(x, residual: false, lower: constant([.nan], []))
        GraphExecutor.materialize([plain.output, plain.expand, plain.depthwise])
        #expect(floats(fused).map(\.bitPattern) == floats(plain.output).map(\.bitPattern))
    }
}
