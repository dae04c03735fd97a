import TesseraGraph
import TesseraKernels
import Testing

/// ``RowFusion``: a fused program and the per-row reductions it reads run as one step, a chunk
/// of rows at a time; results against the naive node-by-node reference.
@Suite("Planner: row fusion")
struct RowFusionTests {
    /// `c = x - mean(x)`, `c / sqrt(mean(c * c) + eps)` over `axes` (every axis but the first
    /// when nil).
    private func layerNorm(_ x: Node, rank: Int, axes: [Int]? = nil) -> (result: Node, mean: Node, variance: Node) {
        let axes = axes ?? Array(1..<rank)
        let mean = Node(.reduce(.mean, axes: axes), inputs: [x])
        let c = Node(.binary(.sub), inputs: [x, mean])
        let variance = Node(.reduce(.mean, axes: axes), inputs: [Node(.binary(.mul), inputs: [c, c])])
        let scale = Node(
            .unary(.sqrt), inputs: [Node(.binary(.add), inputs: [variance, constant([1e-5], [])])])
        return (Node(.binary(.div), inputs: [c, scale]), mean, variance)
    }

    @Test(
        "a layer norm is one step: both means and the normalisation, a chunk of rows at a time",
        arguments: [[256, 768], [300, 257], [1, 5], [3, 4, 50], [70, 2]])
    func layerNormIsOneStep(shape: [Int]) {
        let x = constant(seededValues(shape.reduce(1, *), seed: 40), shape)
        let (y, _, _) = layerNorm(x, rank: shape.count)
        let (plan, stats) = planAndCheck([y])
        // c = x - mean is computed in both programs (c·c and the division).
        #expect(plan.steps == [.rowFused] && plan.fusedNodes == 6, "\(plan)")
        // The variance sums (x - mean)² a row at a time.
        #expect(plan.centeredSquareMembers == 1, "\(plan)")
        #expect(stats.kernels == 1, "\(stats)")
    }

    @Test(
        "size-1 leading axes: a layer norm over the axes after the first larger one is one step",
        arguments: [[1, 300, 40], [1, 1, 64, 33], [1, 7, 2, 9]])
    func layerNormAfterUnitAxes(shape: [Int]) {
        let rowAxis = shape.firstIndex { $0 != 1 }!
        let x = constant(seededValues(shape.reduce(1, *), seed: 49), shape)
        let gamma = constant(seededValues(shape.last!, seed: 50), [shape.last!])
        let (normalized, _, _) = layerNorm(x, rank: shape.count, axes: Array((rowAxis + 1)..<shape.count))
        let (plan, _) = planAndCheck([Node(.binary(.mul), inputs: [normalized, gamma])])
        #expect(plan.steps == [.rowFused], "\(plan)")
        #expect(plan.centeredSquareMembers == 1, "\(plan)")
    }

    @Test("not grouped: a last-axis layer norm of [3, 4, 50] (the axis before the row axis is not 1)")
    func layerNormAfterLargerLeadingAxis() {
        let x = constant(seededValues(3 * 4 * 50, seed: 51), [3, 4, 50])
        let (y, _, _) = layerNorm(x, rank: 3, axes: [2])
        #expect(!planAndCheck([y]).plan.steps.contains(.rowFused))
    }

    @Test("with a scale and shift per column and a strided input")
    func affineLayerNormOfTransposedInput() {
        let source = constant(seededValues(96 * 40, seed: 41), [96, 40])
        let x = Node(.permute([1, 0]), inputs: [source])
        let gamma = constant(seededValues(96, seed: 42), [96])
        let beta = constant(seededValues(96, seed: 43), [1, 96])
        let (normalized, _, _) = layerNorm(x, rank: 2)
        let y = Node(.binary(.add), inputs: [Node(.binary(.mul), inputs: [normalized, gamma]), beta])
        let (plan, _) = planAndCheck([y])
        #expect(plan.steps == [.view, .rowFused], "\(plan)")
    }

    @Test("a softmax written out: exp(x - max) with its max, then the sum with the division")
    func handWrittenSoftmax() {
        let x = constant(seededValues(64 * 1000, seed: 44).map { $0 * 4 }, [64, 1000])
        let maximum = Node(.reduce(.max, axes: [1]), inputs: [x])
        let e = Node(.unary(.exp), inputs: [Node(.binary(.sub), inputs: [x, maximum])])
        let sum = Node(.reduce(.sum, axes: [1]), inputs: [e])
        let y = Node(.binary(.div), inputs: [e, sum])
        // exp(x - max) has two readers (the sum and the division), so it is a result of its own.
        let (plan, _) = planAndCheck([y])
        #expect(plan.steps == [.rowFused, .rowFused], "\(plan)")
    }

    @Test("a requested mean is computed on its own; the variance still joins the group")
    func requestedMember() {
        let x = constant(seededValues(20 * 30, seed: 45), [20, 30])
        let (y, mean, _) = layerNorm(x, rank: 2)
        let (plan, _) = planAndCheck([y, mean])
        #expect(plan.steps == [.kernel, .rowFused], "\(plan)")
    }

    @Test("not grouped: a mean another program reads, a mean over axis 0, an argmax")
    func notGrouped() {
        let x = constant(seededValues(12 * 9, seed: 46), [12, 9])
        let mean = Node(.reduce(.mean, axes: [1]), inputs: [x])
        let centred = Node(.binary(.sub), inputs: [x, mean])
        let other = Node(.binary(.mul), inputs: [Node(.unary(.exp), inputs: [mean]), x])
        let (plan, _) = planAndCheck([centred, other])
        #expect(!plan.steps.contains(.rowFused), "\(plan)")
        let columns = Node(.binary(.sub), inputs: [x, Node(.reduce(.mean, axes: [0]), inputs: [x])])
        #expect(planAndCheck([columns]).plan.steps == [.kernel, .fused])
        let argmax = Node(.reduce(.argmax, axes: [1]), inputs: [x])
        let shifted = Node(.binary(.add), inputs: [x, Node(.cast(.float32), inputs: [argmax])])
        #expect(!planAndCheck([shifted]).plan.steps.contains(.rowFused))
    }

    @Test("a reduced input of another shape than the root's, and an empty input, are left alone")
    func otherShapes() {
        let x = constant(seededValues(8 * 6, seed: 47), [8, 6])
        let wide = constant(seededValues(8 * 5, seed: 48), [8, 5])
        let y = Node(.binary(.sub), inputs: [x, Node(.reduce(.sum, axes: [1]), inputs: [wide])])
        #expect(planAndCheck([y]).plan.steps == [.kernel, .fused])
        let empty = constant([], [0, 4])
        let z = Node(.binary(.sub), inputs: [empty, Node(.reduce(.sum, axes: [1]), inputs: [empty])])
        GraphExecutor.materialize([z])
        #expect(floats(z).isEmpty)
    }
}
