import Foundation
import TesseraKernels

/// The result of timing one workload: the median and spread of repeated runs.
struct Timing {
    /// Seconds per run, sorted.
    let samples: [Double]
    var median: Double { samples[samples.count / 2] }
    var best: Double { samples[0] }
    /// The interquartile range, as a fraction of the median.
    var spread: Double {
        let q1 = samples[samples.count / 4]
        let q3 = samples[(samples.count * 3) / 4]
        return (q3 - q1) / median
    }
}

/// Runs `body` `warmups` times untimed, then `iterations` times timed, and returns the timings.
///
/// Inputs are built by the caller outside `body`; `body` should end when the result is in
/// memory.
func measure(warmups: Int = 3, iterations: Int = 30, _ body: () -> Void) -> Timing {
    let iterations = iterationsOverride ?? iterations
    for _ in 0..<warmups { body() }
    var samples: [Double] = []
    samples.reserveCapacity(iterations)
    for _ in 0..<iterations {
        let start = DispatchTime.now().uptimeNanoseconds
        body()
        let end = DispatchTime.now().uptimeNanoseconds
        samples.append(Double(end - start) / 1e9)
    }
    return Timing(samples: samples.sorted())
}

/// `TESSERA_BENCH_ITERATIONS=N` times every workload N times (to profile one workload with
/// `perf` long enough that start-up does not dominate the samples).
let iterationsOverride = ProcessInfo.processInfo.environment["TESSERA_BENCH_ITERATIONS"].flatMap { Int($0) }

/// Prints one line of a benchmark table.
func report(_ name: String, _ timing: Timing, _ figures: String) {
    let ms = String(format: "%9.3f ms", timing.median * 1e3)
    let spread = String(format: "±%4.1f%%", timing.spread * 100)
    print("\(name.padding(toLength: 44, withPad: " ", startingAt: 0)) \(ms) \(spread)  \(figures)")
}

/// Keeps the optimizer from deleting work whose result is otherwise unused.
@inline(never)
func blackHole<T>(_ value: T) {
    withExtendedLifetime(value) {}
}

/// Writes `{"tessera": {"version": ..., "threads": ..., "blas_core": ..., <fields>}}`, the
/// document `Benchmarks/peers/compare.py` and `compare_models.py` read.
func writeTesseraJSON(_ fields: [String: Any], to path: String) {
    var object: [String: Any] = [
        "version": "0.1.0", "threads": KernelThreads.coreBudget, "blas_core": KernelThreads.blasCoreName,
        "blas": KernelThreads.blasSummary,
    ]
    for (key, value) in fields { object[key] = value }
    do {
        let data = try JSONSerialization.data(
            withJSONObject: ["tessera": object], options: [.prettyPrinted, .sortedKeys])
        try data.write(to: URL(fileURLWithPath: path))
        print("wrote \(path)")
    } catch {
        FileHandle.standardError.write(Data("could not write \(path): \(error)\n".utf8))
    }
}

/// The asynchronous form of ``measure(warmups:iterations:_:)``: `body` is awaited.
func measureAsync(warmups: Int = 3, iterations: Int = 30, _ body: () async -> Void) async -> Timing {
    let iterations = iterationsOverride ?? iterations
    for _ in 0..<warmups { await body() }
    var samples: [Double] = []
    samples.reserveCapacity(iterations)
    for _ in 0..<iterations {
        let start = DispatchTime.now().uptimeNanoseconds
        await body()
        let end = DispatchTime.now().uptimeNanoseconds
        samples.append(Double(end - start) / 1e9)
    }
    return Timing(samples: samples.sorted())
}

/// One workload timed the three ways the tensor benchmarks report: awaited (`await
/// shapedArray(of:)`, the headline), blocking (the synchronous `shapedArray(of:)`) and through
/// Tessera's extensions (`materialized()`, `MLTensor.materialize([...])`).
///
/// The runs interleave (one of each per iteration), so a host whose speed drifts during the
/// measurement favours none of them.
struct WorkloadTimings {
    var awaited: Timing
    var blocking: Timing
    var extensionPath: Timing

    init(
        warmups: Int = 3, iterations: Int = 30, awaited awaitedBody: () async -> Void,
        blocking blockingBody: () -> Void,
        extensionPath extensionBody: () -> Void
    ) async {
        let iterations = iterationsOverride ?? iterations
        for _ in 0..<warmups {
            await awaitedBody()
            blockingBody()
            extensionBody()
        }
        var samples: ([Double], [Double], [Double]) = ([], [], [])
        func seconds(since start: UInt64) -> Double { Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9 }
        for _ in 0..<iterations {
            var start = DispatchTime.now().uptimeNanoseconds
            await awaitedBody()
            samples.0.append(seconds(since: start))
            start = DispatchTime.now().uptimeNanoseconds
            blockingBody()
            samples.1.append(seconds(since: start))
            start = DispatchTime.now().uptimeNanoseconds
            extensionBody()
            samples.2.append(seconds(since: start))
        }
        awaited = Timing(samples: samples.0.sorted())
        blocking = Timing(samples: samples.1.sorted())
        extensionPath = Timing(samples: samples.2.sorted())
    }
}
