import TesseraGraph
import TesseraKernels
import Testing

/// ``ConcatReduction``: a reduction of a concatenation reduces the parts where they lie.
@Suite("Planner: concat reduction")
struct ConcatReductionTests {
    @Test("a trailing-axis reduction of a concatenation along axis 0 is one step over the parts")
    func reducesParts() {
        let a = constant(seededValues(2 * 6, seed: 40), [2, 6])
        let b = constant(seededValues(4 * 6, seed: 41), [4, 6])
        let y = Node(.reduce(.max, axes: [1]), inputs: [Node(.concat(axis: 0), inputs: [a, b])])
        let (plan, _) = planAndCheck([y])
        #expect(plan.steps == [.reduceConcat] && plan.kernelOps.isEmpty, "\(plan)")
    }

    @Test("seen through reshapes, when every part is a whole number of rows")
    func throughReshapes() {
        let a = constant(seededValues(2 * 6, seed: 42), [2, 6])
        let b = constant(seededValues(4 * 6, seed: 43), [4, 6])
        let rows = Node(.reshape([12, 3]), inputs: [Node(.concat(axis: 0), inputs: [a, b])])
        let y = Node(.reduce(.sum, axes: [1]), inputs: [rows])
        #expect(planAndCheck([y]).plan.steps == [.reduceConcat])
        // Parts of 9 and 27 elements in rows of 6: a row would straddle two parts.
        let c = constant(seededValues(9, seed: 44), [1, 9])
        let d = constant(seededValues(27, seed: 45), [3, 9])
        let uneven = Node(
            .reduce(.sum, axes: [1]),
            inputs: [Node(.reshape([6, 6]), inputs: [Node(.concat(axis: 0), inputs: [c, d])])])
        #expect(planAndCheck([uneven]).plan.steps == [.kernel, .view, .kernel])
    }

    @Test("not rewritten: a concatenation along axis 1, or one that is also requested")
    func notRewritten() {
        let a = constant(seededValues(6, seed: 46), [2, 3])
        let b = constant(seededValues(6, seed: 47), [2, 3])
        let alongColumns = Node(.reduce(.sum, axes: [1]), inputs: [Node(.concat(axis: 1), inputs: [a, b])])
        #expect(planAndCheck([alongColumns]).plan.steps == [.kernel, .kernel])
        let joined = Node(.concat(axis: 0), inputs: [a, b])
        let y = Node(.reduce(.sum, axes: [1]), inputs: [joined])
        #expect(planAndCheck([joined, y]).plan.steps == [.kernel, .kernel])
    }
}
