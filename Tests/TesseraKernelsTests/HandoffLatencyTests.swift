import Testing

@testable import TesseraKernels

/// ``HandoffLatency``: the minimum of each batch of samples, followed a quarter of the way; and
/// the spinning workers' estimate from real loops.
@Suite("Handoff latency")
struct HandoffLatencyTests {
    @Test("the first batch's minimum, then a quarter of the way to each later batch's minimum")
    func followsBatchMinimums() {
        var latency = HandoffLatency()
        for sample in [90, 85, 4000, 88, 95, 87, 86] { latency.add(nanoseconds: sample) }
        #expect(latency.estimate == nil)
        latency.add(nanoseconds: 91)
        #expect(latency.estimate == 85)
        // A far batch (one sample late, as when the worker was late to look) moves it by a
        // quarter of the difference of the minimums.
        for sample in [325, 330, 900, 341, 333, 329, 338, 345] { latency.add(nanoseconds: sample) }
        #expect(latency.estimate == 85 + (325 - 85) / 4)
        for _ in 0..<(12 * HandoffLatency.batchSize) { latency.add(nanoseconds: 325) }
        #expect(latency.estimate.map { $0 > 300 && $0 <= 325 } == true)
        // A sample from clocks read out of order counts as zero, never negative.
        for _ in 0..<HandoffLatency.batchSize { latency.add(nanoseconds: -50) }
        #expect(latency.estimate.map { $0 >= 0 } == true)
    }

    @Test("the spinning workers estimate how long a loop takes to reach a polling worker")
    func workersMeasure() {
        guard let workers = SpinningWorkers.shared else { return }
        func spin(_ duration: Duration) {
            let until = ContinuousClock.now + duration
            while ContinuousClock.now < until {}
        }
        // Loops until there is an estimate (the workers are shared, so other tests' loops count
        // too), for at most 20 s: on a loaded machine (the suite under a sanitizer, tests running
        // in parallel on two CPUs) the worker is often not running when a loop opens, and most
        // loops give no sample.
        let deadline = ContinuousClock.now + .seconds(20)
        var loops = 0
        while workers.handoffNanoseconds == nil && ContinuousClock.now < deadline {
            // Chunks of 10 µs: the loop is still open when the worker checks its sample.
            // `run` returns false when another thread's loop holds the workers.
            if workers.run(chunks: 2, { _ in spin(.microseconds(10)) }) { loops += 1 }
            // Leave the worker polling before the next loop opens.
            spin(.microseconds(5))
        }
        let estimate = workers.handoffNanoseconds
        #expect(
            estimate.map { $0 > 0 && $0 < 1_000_000 } == true,
            "after \(loops) loops: \(estimate.map(String.init) ?? "none")")
    }
}
