import TesseraGraph
import TesseraKernels
import Testing

/// ``MemoryPlan``: each intermediate's buffer goes back to the pool after its last reader.
@Suite("Planner: memory plan")
struct MemoryPlanTests {
    @Test("a chain of four matmuls keeps two intermediates alive at once", arguments: [4, 6])
    func chainReusesBuffers(length: Int) {
        let w = constant(seededValues(32 * 32, seed: 50).map { $0 / 8 }, [32, 32])
        var t = constant(seededValues(32 * 32, seed: 51), [32, 32])
        for _ in 0..<length { t = Node(.matmul, inputs: [t, w]) }
        let (plan, stats) = planAndCheck([t], tolerance: 1e-4)
        #expect(plan.steps == Array(repeating: .kernel, count: length), "\(plan)")
        // Each product dies at the next one: the newest and the one it reads.
        #expect(plan.peakIntermediates == 2, "\(plan)")
        // At run time: the requested result and one dying intermediate (the pool's buffers
        // are reused as the plan frees them).
        #expect(stats.peakBytes <= 2 * 32 * 32 * 4, "\(stats)")
    }

    @Test("a value read twice by one step is freed once")
    func doubleReaderFreedOnce() {
        let a = constant(seededValues(16 * 16, seed: 52), [16, 16])
        let t = Node(.matmul, inputs: [a, a])
        let s = Node(.matmul, inputs: [t, t])  // reads t twice
        let u = Node(.matmul, inputs: [s, a])
        let v = Node(.matmul, inputs: [u, a])
        let y = Node(.concat(axis: 0), inputs: [s, u, v, a])
        let (plan, stats) = planAndCheck([y], tolerance: 1e-4)
        #expect(plan.steps == Array(repeating: .kernel, count: 5) && plan.peakIntermediates == 3, "\(plan)")
        // s, u and v (1 KiB each) are alive with the 4 KiB result; freeing t twice would count
        // 1 KiB too few.
        #expect(stats.peakBytes == 3 * 1024 + 4096, "\(stats)")
    }

    @Test("a wide fan-out keeps every branch until the join")
    func fanOut() {
        let x = constant(seededValues(8 * 8, seed: 53), [8, 8])
        let branches = (0..<3).map { k in
            Node(.matmul, inputs: [x, constant(seededValues(64, seed: 54 + UInt64(k)), [8, 8])])
        }
        let joined = Node(.concat(axis: 0), inputs: branches)
        let (plan, _) = planAndCheck([joined])
        #expect(plan.steps == [.kernel, .kernel, .kernel, .kernel] && plan.peakIntermediates == 3, "\(plan)")
    }
}
