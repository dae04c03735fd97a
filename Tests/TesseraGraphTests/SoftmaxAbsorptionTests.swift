import TesseraGraph
import TesseraKernels
import Testing

/// ``SoftmaxAbsorption``: a fused producer runs chunk by chunk inside its softmax.
@Suite("Planner: absorption into softmax")
struct SoftmaxAbsorptionTests {
    @Test("a scaled, masked logit chain runs inside its softmax along the last axis", arguments: [false, true])
    func producerIntoSoftmax(log: Bool) {
        let logits = constant(seededValues(6 * 40, seed: 30), [2, 3, 40])
        let bias = constant(seededValues(40, seed: 31), [40])
        let scaled = Node(.binary(.add), inputs: [Node(.binary(.mul), inputs: [logits, constant([0.125], [])]), bias])
        let y = Node(log ? .logSoftmax(axis: 2) : .softmax(axis: 2), inputs: [scaled])
        let (plan, stats) = planAndCheck([y])
        #expect(plan.steps == [.fusedSoftmax] && plan.fusedNodes == 2, "\(plan)")
        #expect(stats.kernels == 1, "\(stats)")
    }

    @Test("not absorbed: a softmax along another axis, over axis 0, or of a producer read twice")
    func notAbsorbed() {
        let x = constant(seededValues(12, seed: 32), [3, 4])
        let middle = Node(
            .softmax(axis: 1), inputs: [Node(.unary(.exp), inputs: [constant(seededValues(24, seed: 33), [2, 3, 4])])])
        #expect(planAndCheck([middle]).plan.steps == [.fused, .kernel])
        let overRows = Node(.softmax(axis: 0), inputs: [Node(.unary(.neg), inputs: [x])])
        #expect(planAndCheck([overRows]).plan.steps == [.fused, .kernel])
        let shared = Node(.unary(.neg), inputs: [x])
        let both = Node(.binary(.add), inputs: [Node(.softmax(axis: 1), inputs: [shared]), shared])
        #expect(planAndCheck([both]).plan.steps == [.fused, .kernel, .fused])
    }
}
