import TesseraGraph
import TesseraKernels
import Testing

/// ``CommonSubexpressionElimination``: equal entries and identity ops share one value.
@Suite("Planner: common subexpressions and identities")
struct CommonSubexpressionTests {
    @Test("two equal subexpressions become one fused step read twice")
    func equalSubexpressionsMerge() {
        let x = constant(seededValues(16, seed: 1), [4, 4])
        let w = constant(seededValues(16, seed: 2), [4, 4])
        // exp(x) is built twice; the matmul reads both copies.
        let product = Node(.matmul, inputs: [Node(.unary(.exp), inputs: [x]), Node(.unary(.exp), inputs: [x])])
        let y = Node(.matmul, inputs: [product, w])
        let (plan, _) = planAndCheck([Node(.binary(.add), inputs: [y, Node(.matmul, inputs: [product, w])])])
        // Two exps merge, and so do the two `matmul(product, w)`.
        #expect(plan.mergedEntries == 2, "\(plan)")
        #expect(plan.steps == [.fused, .kernel, .kernel, .fused], "\(plan)")
        #expect(plan.kernelOps == ["matmul", "matmul"], "\(plan)")
    }

    @Test("equal ops on different inputs stay apart")
    func differentInputsStayApart() {
        let a = constant(seededValues(6, seed: 3), [2, 3])
        let b = constant(seededValues(6, seed: 3), [2, 3])
        let y = Node(.binary(.add), inputs: [Node(.unary(.exp), inputs: [a]), Node(.unary(.exp), inputs: [b])])
        let (plan, _) = planAndCheck([y])
        #expect(plan.mergedEntries == 0 && plan.steps == [.fused] && plan.fusedNodes == 3, "\(plan)")
    }

    @Test("identity reshape, permute, cast, slice and broadcast disappear")
    func identitiesDisappear() {
        let a = constant(seededValues(12, seed: 4), [3, 4])
        let b = constant(seededValues(20, seed: 5), [4, 5])
        var t = Node(.matmul, inputs: [a, b])
        t = Node(.reshape([3, 5]), inputs: [t])
        t = Node(.permute([0, 1]), inputs: [t])
        t = Node(.cast(.float32), inputs: [t])
        t = Node(.slice(starts: [0, 0], steps: [1, 1], counts: [3, 5]), inputs: [t])
        t = Node(.broadcast([3, 5]), inputs: [t])
        let y = Node(.unary(.tanh), inputs: [t])
        let (plan, _) = planAndCheck([y])
        #expect(plan.mergedEntries == 5, "\(plan)")
        #expect(plan.steps == [.kernel, .fused] && plan.fusedNodes == 1, "\(plan)")
    }

    @Test("a reshape that changes the shape, or a real permutation, stays a view")
    func realViewsStay() {
        let a = constant(seededValues(12, seed: 6), [3, 4])
        let b = constant(seededValues(20, seed: 7), [4, 5])
        let t = Node(.permute([1, 0]), inputs: [Node(.matmul, inputs: [a, b])])
        let y = Node(.matmul, inputs: [t, constant(seededValues(6, seed: 8), [3, 2])])
        let (plan, _) = planAndCheck([y])
        #expect(plan.mergedEntries == 0 && plan.steps == [.kernel, .view, .kernel], "\(plan)")
    }
}
