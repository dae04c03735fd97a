import TesseraGraph
import TesseraKernels
import Testing

/// ``ReductionStreaming``: a fused producer runs chunk by chunk inside its reduction.
@Suite("Planner: streaming into reductions")
struct ReductionStreamingTests {
    @Test(
        "an element-wise producer streams into its trailing-axes reduction, chunk by chunk",
        arguments: [[50, 1000], [3, 4, 5], [1, 7], [40_000, 1]])
    func producerIntoReduction(shape: [Int]) {
        let count = shape.reduce(1, *)
        let data = (0..<count).map { Float($0 % 17) - 8 }
        let x = constant(data, shape)
        let two = constant([2], [])
        let axes = Array(1..<shape.count)
        let sum = Node(.reduce(.sum, axes: axes), inputs: [Node(.binary(.mul), inputs: [x, two])])
        let maxNode = Node(.reduce(.max, axes: axes), inputs: [Node(.unary(.abs), inputs: [x])])
        let (plan, stats) = planAndCheck([sum, maxNode])
        #expect(plan.steps == [.fusedReduce, .fusedReduce] && plan.fusedNodes == 2, "\(plan)")
        #expect(stats.kernels == 2 && stats.fusedGroups == 2, "\(stats)")
    }

    @Test("a mean over the last two axes of a three-op chain is one step")
    func meanOfChain() {
        let x = constant(seededValues(2 * 3 * 5, seed: 20), [2, 3, 5])
        let y = Node(
            .reduce(.mean, axes: [1, 2]),
            inputs: [
                Node(.unary(.exp), inputs: [Node(.binary(.sub), inputs: [Node(.unary(.square), inputs: [x]), x])])
            ])
        let (plan, _) = planAndCheck([y])
        #expect(plan.steps == [.fusedReduce] && plan.fusedNodes == 3, "\(plan)")
    }

    @Test("not streamed: a reduction over axis 0, an argmax, a producer with a second reader")
    func notStreamed() {
        let x = constant(seededValues(12, seed: 21), [3, 4])
        let overRows = Node(.reduce(.sum, axes: [0]), inputs: [Node(.unary(.exp), inputs: [x])])
        #expect(planAndCheck([overRows]).plan.steps == [.fused, .kernel])
        let argmax = Node(.reduce(.argmax, axes: [1]), inputs: [Node(.unary(.exp), inputs: [x])])
        #expect(planAndCheck([argmax]).plan.steps == [.fused, .kernel])
        let shared = Node(.unary(.exp), inputs: [x])
        let sum = Node(.reduce(.sum, axes: [1]), inputs: [shared])
        let product = Node(.reduce(.product, axes: [1]), inputs: [shared])
        #expect(planAndCheck([sum, product]).plan.steps == [.fused, .kernel, .kernel])
    }

    @Test("a producer that is also requested is computed once, not absorbed")
    func requestedProducer() {
        let x = constant([1, 2, 3, 4, 5, 6], [2, 3])
        let y = Node(.unary(.square), inputs: [x])
        let total = Node(.reduce(.sum, axes: [1]), inputs: [y])
        let (plan, _) = planAndCheck([y, total])
        #expect(plan.steps == [.fused, .kernel], "\(plan)")
        #expect(floats(total) == [14, 77])
    }

    @Test("a streamed sum over an empty trailing axis gives zeros")
    func emptyTrailingAxis() {
        let x = constant([], [3, 0])
        let sum = Node(.reduce(.sum, axes: [1]), inputs: [Node(.unary(.square), inputs: [x])])
        #expect(GraphExecutor.describePlan([sum]).steps == [.fusedReduce])
        GraphExecutor.materialize([sum])
        #expect(floats(sum) == [0, 0, 0])
    }
}
