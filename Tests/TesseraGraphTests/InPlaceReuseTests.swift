import Foundation
import TesseraGraph
import TesseraKernels
import Testing

/// ``InPlaceReuse``: a fused program writes over a dying input of its type and shape.
@Suite("Planner: in-place reuse")
struct InPlaceReuseTests {
    @Test("a fused step writes over a dying intermediate; peak memory stays at one buffer")
    func inPlace() {
        // y = exp(matmul(a, b)) + 1: the matmul result dies at the fused step and takes its result.
        let a = constant([Float](repeating: 0.5, count: 64 * 64), [64, 64])
        let b = constant([Float](repeating: 0.01, count: 64 * 64), [64, 64])
        // (No local holds the product: a held intermediate is recorded, never overwritten.)
        let y = Node(
            .binary(.add), inputs: [Node(.unary(.exp), inputs: [Node(.matmul, inputs: [a, b])]), constant([1], [])])
        let (plan, stats) = planAndCheck([y])
        #expect(plan.steps == [.kernel, .fused] && plan.inPlaceSteps == 1, "\(plan)")
        #expect(stats.inPlaceSteps == 1, "\(stats)")
        #expect(stats.peakBytes <= 64 * 64 * 4, "\(stats)")
        let expected = Float(Foundation.exp(Double(0.5 * 0.01 * 64))) + 1
        #expect(floats(y).allSatisfy { abs($0 - expected) < 1e-5 })
    }

    @Test("not in place: an input that lives on, one of another shape, one of another type")
    func notInPlace() {
        let a = constant(seededValues(12, seed: 60), [3, 4])
        let b = constant(seededValues(16, seed: 61), [4, 4])
        let product = Node(.matmul, inputs: [a, b])
        // The product is requested too: it must not be overwritten.
        let kept = Node(.unary(.exp), inputs: [product])
        let (keptPlan, keptStats) = planAndCheck([kept, product])
        #expect(keptPlan.inPlaceSteps == 0 && keptStats.inPlaceSteps == 0, "\(keptPlan)")
        // A result broadcast to a bigger shape (column sums: a row sum would join the program
        // in a row-fused step).
        let row = Node(.reduce(.sum, axes: [0]), inputs: [Node(.matmul, inputs: [a, b])])
        let wider = Node(.binary(.add), inputs: [row, constant(seededValues(12, seed: 62), [3, 4])])
        let (widerPlan, _) = planAndCheck([wider])
        #expect(widerPlan.steps == [.kernel, .kernel, .fused] && widerPlan.inPlaceSteps == 0, "\(widerPlan)")
        // A comparison writes bools over no float32 buffer.
        let flags = Node(.binary(.greater), inputs: [Node(.matmul, inputs: [a, b]), constant([0], [])])
        let (flagsPlan, _) = planAndCheck([flags])
        #expect(flagsPlan.inPlaceSteps == 0, "\(flagsPlan)")
    }

    @Test("an input still shared by a view is not overwritten")
    func sharedByAView() {
        let a = constant(seededValues(16, seed: 63), [4, 4])
        let product = Node(.matmul, inputs: [a, a])
        // The reshape (a view of the product) is requested; the program reads the product.
        let view = Node(.reshape([16]), inputs: [product])
        let y = Node(.unary(.neg), inputs: [product])
        let (plan, stats) = planAndCheck([view, y])
        // The plan allows it (the product dies at the program); the run sees the view's share.
        #expect(plan.steps == [.kernel, .view, .fused] && plan.inPlaceSteps == 1, "\(plan)")
        #expect(stats.inPlaceSteps == 0, "\(stats)")
    }
}
