import Foundation
import TesseraTensor

/// The cost of the process's first awaited materialization, measured before any other
/// workload: `softmax` of a `[64, 1000]` tensor, awaited twice (the first compiles the plan
/// and starts the kernel threads; the second finds both ready). Seconds.
func measureFirstAwait() async -> (first: Double, second: Double) {
    let logits = MLTensor(shape: [64, 1000], scalars: benchmarkData(64_000, seed: 2))
    var start = DispatchTime.now().uptimeNanoseconds
    blackHole(await logits.softmax(alongAxis: -1).shapedArray(of: Float.self))
    let first = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    start = DispatchTime.now().uptimeNanoseconds
    blackHole(await logits.softmax(alongAxis: -1).shapedArray(of: Float.self))
    let second = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    return (first, second)
}

/// Awaiting 16-element results (`TESSERA_BENCH_ONLY=await16`, and part of the tensor area):
/// a folded result held inline in the tensor, and a `softmax` that is a graph node run
/// through a cached plan, each awaited and read blocking. Records microseconds per call as
/// `await16_inline`, `await16_node` (and `_blocking`).
func runSmallAwaitBenchmarks(into medians: inout [String: Double]) async {
    let calls = 100
    let x16 = MLTensor(shape: [16], scalars: benchmarkData(16, seed: 8))
    let folded = x16 * 1.0001 + 0.0001
    let inline = await WorkloadTimings(
        iterations: 50,
        awaited: { for _ in 0..<calls { blackHole(await folded.shapedArray(of: Float.self)) } },
        blocking: { for _ in 0..<calls { blackHole(folded.shapedArray(of: Float.self)) } },
        extensionPath: { for _ in 0..<calls { blackHole(folded.materialized()) } })
    let node = await WorkloadTimings(
        iterations: 50,
        awaited: { for _ in 0..<calls { blackHole(await x16.softmax().shapedArray(of: Float.self)) } },
        blocking: { for _ in 0..<calls { blackHole(x16.softmax().shapedArray(of: Float.self)) } },
        extensionPath: { for _ in 0..<calls { blackHole(x16.softmax().materialized()) } })
    func microseconds(_ timing: Timing) -> Double { timing.median * 1e6 / Double(calls) }
    for (key, name, timing) in [
        ("await16_inline", "await a 16-element result (inline)", inline),
        ("await16_node", "await a 16-element softmax (graph node)", node),
    ] {
        medians[key] = microseconds(timing.awaited)
        medians["\(key)_blocking"] = microseconds(timing.blocking)
        print(
            String(
                format: "%@ %9.3f µs  blocking %.3f µs per call",
                name.padding(toLength: 44, withPad: " ", startingAt: 0),
                microseconds(timing.awaited), microseconds(timing.blocking)))
    }
}

/// `await tensor.shapedArray(of: Float.self)` from a nonisolated async function: called from the
/// main actor, the call hops to the cooperative pool and back, as the API's own call does.
func awaitedElements(_ tensor: MLTensor) async -> MLShapedArray<Float> {
    await tensor.shapedArray(of: Float.self)
}
