import TesseraGraph
import TesseraKernels
import Testing

/// ``ElementwiseFusion``: element-wise chains become one program per fusion root.
@Suite("Planner: element-wise fusion")
struct ElementwiseFusionTests {
    @Test("a broadcast normalize chain becomes one fused program")
    func normalizeChainFuses() {
        let x = constant(seededValues(24, seed: 10), [2, 3, 2, 2])
        let mean = constant([1, 2, 3], [1, 3, 1, 1])
        let std = constant([2, 4, 8], [1, 3, 1, 1])
        let gain = constant([0.5, 1, 2], [1, 3, 1, 1])
        let y = Node(
            .unary(.tanh),
            inputs: [
                Node(
                    .binary(.mul),
                    inputs: [Node(.binary(.div), inputs: [Node(.binary(.sub), inputs: [x, mean]), std]), gain])
            ])
        let (plan, stats) = planAndCheck([y])
        #expect(plan.steps == [.fused] && plan.fusedNodes == 4, "\(plan)")
        #expect(stats.kernels == 1 && stats.fusedGroups == 1 && stats.fusedNodes == 4, "\(stats)")
        #expect(y.inputs.isEmpty)
    }

    @Test("a value a kernel also reads is a fusion root: the chain splits there")
    func sharedValueIsARoot() {
        let x = constant(seededValues(16, seed: 11), [4, 4])
        let w = constant(seededValues(16, seed: 12), [4, 4])
        let e = Node(.unary(.exp), inputs: [Node(.binary(.mul), inputs: [x, constant([0.5], [])])])
        let y = Node(.binary(.add), inputs: [Node(.matmul, inputs: [e, w]), Node(.unary(.neg), inputs: [e])])
        let (plan, _) = planAndCheck([y], tolerance: 1e-5)
        // `e` (mul, exp) is one program; `y` (neg, add) reads it and the matmul.
        #expect(plan.steps == [.fused, .kernel, .fused] && plan.fusedNodes == 4, "\(plan)")
    }

    @Test("two requested values of one chain are two roots")
    func requestedValuesAreRoots() {
        let x = constant(seededValues(8, seed: 13), [8])
        let a = Node(.unary(.square), inputs: [x])
        let b = Node(.binary(.add), inputs: [a, constant([1], [])])
        let (plan, _) = planAndCheck([a, b])
        #expect(plan.steps == [.fused, .fused] && plan.fusedNodes == 2, "\(plan)")
    }

    @Test("a chain that changes compute domain splits at the first entry of the other domain")
    func domainConflictSplits() {
        // float32: x * 4 → cast to int32 (computes in float32); int32: + k, * k; back to float32.
        let x = constant([0.25, -0.5, 1, 1.5, -2, 0.75], [2, 3])
        let scaled = Node(.cast(.int32), inputs: [Node(.binary(.mul), inputs: [x, constant([4], [])])])
        let k = intConstant([3, -1, 2], [3])
        let integer = Node(.binary(.mul), inputs: [Node(.binary(.add), inputs: [scaled, k]), k])
        let y = Node(.cast(.float32), inputs: [integer])
        let (plan, _) = planAndCheck([y])
        // The int32 program (add, mul) stops at the float32 cast below it, which becomes a root;
        // the final cast to float32 computes in float32 again, so `integer` is a root too.
        #expect(plan.steps == [.fused, .fused, .fused], "\(plan)")
        #expect(plan.fusedNodes == 5, "\(plan)")
    }

    @Test("a cast from int32 to float32 at the head of a float chain stays in the program")
    func castToFloatJoinsTheChain() {
        let pixels = intConstant([0, 64, 128, 255, 17, 3], [2, 3])
        let y = Node(
            .binary(.div),
            inputs: [
                Node(.binary(.sub), inputs: [Node(.cast(.float32), inputs: [pixels]), constant([127.5], [])]),
                constant([127.5], []),
            ])
        let (plan, _) = planAndCheck([y])
        #expect(plan.steps == [.fused] && plan.fusedNodes == 3, "\(plan)")
    }
}
