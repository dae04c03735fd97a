import Foundation
import Synchronization

/// The `roundtrip` area: how long a cache line takes to go from one thread's core to another's
/// and back, the figure `Benchmarks/peers/compare_models.py` records around every timed run.
///
/// On a VM the host may move the vCPUs between cores that share a cache (on this project's
/// machine 60–130 ns a round trip) and cores far apart (300–400 ns), and back, within seconds;
/// two-thread figures of models whose loops are short (MobileNetV2) then move by 10–30 %
/// between runs of the same binary (`Docs/Performance.md`). The area runs alone, before anything
/// starts Tessera's kernel threads, and prints one line: `round trip N ns`, or
/// `round trip unavailable (one CPU)`.
func runRoundTrip() {
    guard let nanoseconds = coreRoundTripNanoseconds() else {
        print("round trip unavailable (one CPU)")
        return
    }
    print(String(format: "round trip %.1f ns", nanoseconds))
}

/// The mean round trip of a counter passed between this thread and a second one `trips` times
/// (after `warmUp` untimed trips): each thread stores the next value and spins until it reads
/// the other's. `nil` when the process can use only one CPU (the two would take turns on it).
///
/// ```swift
/// coreRoundTripNanoseconds()  // 62.4 between cores that share a cache
/// ```
func coreRoundTripNanoseconds(trips: Int = 200_000, warmUp: Int = 2_000) -> Double? {
    guard ProcessInfo.processInfo.activeProcessorCount > 1, trips > 0 else { return nil }
    let counter = RoundTripCounter()
    let finished = DispatchSemaphore(value: 0)
    let partner = Thread {
        // Answers each odd value v with v + 1 until it reads RoundTripCounter.stop.
        var expected = 1
        while true {
            let value = counter.value.load(ordering: .acquiring)
            if value == RoundTripCounter.stop { break }
            if value == expected {
                counter.value.store(expected + 1, ordering: .releasing)
                expected += 2
            }
        }
        finished.signal()
    }
    partner.start()
    var start = DispatchTime.now().uptimeNanoseconds
    for trip in 0..<(warmUp + trips) {
        if trip == warmUp { start = DispatchTime.now().uptimeNanoseconds }
        counter.value.store(2 * trip + 1, ordering: .releasing)
        while counter.value.load(ordering: .acquiring) != 2 * trip + 2 {}
    }
    let elapsed = DispatchTime.now().uptimeNanoseconds - start
    counter.value.store(RoundTripCounter.stop, ordering: .releasing)
    finished.wait()
    return Double(elapsed) / Double(trips)
}

/// The counter the two threads of ``coreRoundTripNanoseconds(trips:warmUp:)`` pass back and forth.
private final class RoundTripCounter: Sendable {
    /// Tells the partner thread to return.
    static let stop = -1
    let value = Atomic<Int>(0)
}
