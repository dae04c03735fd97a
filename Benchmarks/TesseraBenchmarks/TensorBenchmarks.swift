import COpenBLAS
import Foundation
import TesseraKernels
import TesseraTensor

/// Deterministic float32 test data (a linear congruential generator), in [-1, 1).
func benchmarkData(_ count: Int, seed: UInt32) -> [Float] {
    var state = seed
    return (0..<count).map { _ in
        state = state &* 1_664_525 &+ 1_013_904_223
        return Float(state >> 8) / Float(1 << 23) - 1
    }
}

/// The tensor workloads T1–T9 of workloads.md through the public MLTensor API, each timed
/// three ways in the same run:
///
/// - **async** (the headline, the `T1`… keys): the expression built and its results read as
///   Apple's documentation writes it, `await t.shapedArray(of:)` from an `async` context, one
///   await per result (T2's softmax and argmax are two awaits);
/// - **blocking** (`T1_blocking`…): the same code with the synchronous `shapedArray(of:)`;
/// - **extension** (`T1_extension`…): Tessera's `materialized()` / `MLTensor.materialize([…])`,
///   which computes several results in one plan.
///
/// Returns the medians in milliseconds by key.
func runTensorBenchmarks() async -> [String: Double] {
    print("\n## MLTensor workloads (float32; build the expression, then read its results)")
    print("   async = `await shapedArray(of:)` from an async context (headline); blocking = the synchronous")
    print("   `shapedArray(of:)`; extension = `materialized()` / `MLTensor.materialize([...])`")
    var medians: [String: Double] = [:]
    // `TESSERA_BENCH_ONLY=T3,T6` runs a subset (for profiling).
    let only = ProcessInfo.processInfo.environment["TESSERA_BENCH_ONLY"].map {
        Set($0.split(separator: ",").map(String.init))
    }
    func wanted(_ id: String) -> Bool { only?.contains(id) ?? true }
    func record(_ id: String, _ name: String, _ ways: WorkloadTimings, _ note: String = "") {
        medians[id] = ways.awaited.median * 1e3
        medians["\(id)_blocking"] = ways.blocking.median * 1e3
        medians["\(id)_extension"] = ways.extensionPath.median * 1e3
        let figures = String(
            format: "blocking %.4f ms, extension %.4f ms; async/blocking %.2f×", ways.blocking.median * 1e3,
            ways.extensionPath.median * 1e3, ways.awaited.median / ways.blocking.median)
        report("\(id) \(name)", ways.awaited, note.isEmpty ? figures : "\(figures); \(note)")
    }

    // T1 normalize
    if wanted("T1") {
        let x1 = MLTensor(shape: [8, 3, 224, 224], scalars: benchmarkData(8 * 3 * 224 * 224, seed: 1))
        let mean = MLTensor(shape: [1, 3, 1, 1], scalars: [0.485, 0.456, 0.406] as [Float])
        let std = MLTensor(shape: [1, 3, 1, 1], scalars: [0.229, 0.224, 0.225] as [Float])
        record(
            "T1", "normalize",
            await WorkloadTimings(
                awaited: { blackHole(await ((x1 - mean) / std).shapedArray(of: Float.self)) },
                blocking: { blackHole(((x1 - mean) / std).shapedArray(of: Float.self)) },
                extensionPath: { blackHole(((x1 - mean) / std).materialized()) }))
    }
    // T2 softmax_argmax
    if wanted("T2") {
        let logits = MLTensor(shape: [64, 1000], scalars: benchmarkData(64_000, seed: 2).map { $0 * 8 })
        record(
            "T2", "softmax_argmax",
            await WorkloadTimings(
                awaited: {
                    blackHole(await logits.softmax(alongAxis: -1).shapedArray(of: Float.self))
                    blackHole(await logits.argmax(alongAxis: -1).shapedArray(of: Int32.self))
                },
                blocking: {
                    blackHole(logits.softmax(alongAxis: -1).shapedArray(of: Float.self))
                    blackHole(logits.argmax(alongAxis: -1).shapedArray(of: Int32.self))
                },
                extensionPath: { MLTensor.materialize([logits.softmax(alongAxis: -1), logits.argmax(alongAxis: -1)]) }))
    }
    // T3 layernorm
    if wanted("T3") {
        let x3 = MLTensor(shape: [256, 768], scalars: benchmarkData(256 * 768, seed: 3))
        func layerNorm() -> MLTensor {
            let c = x3 - x3.mean(alongAxes: [-1], keepRank: true)
            return c / ((c * c).mean(alongAxes: [-1], keepRank: true) + 1e-5).squareRoot()
        }
        record(
            "T3", "layernorm",
            await WorkloadTimings(
                awaited: { blackHole(await layerNorm().shapedArray(of: Float.self)) },
                blocking: { blackHole(layerNorm().shapedArray(of: Float.self)) },
                extensionPath: { blackHole(layerNorm().materialized()) }))
    }
    // T4 concat_reshape_mean
    if wanted("T4") {
        let a4 = MLTensor(shape: [32, 64, 64], scalars: benchmarkData(32 * 64 * 64, seed: 4))
        let b4 = MLTensor(shape: [32, 64, 64], scalars: benchmarkData(32 * 64 * 64, seed: 5))
        func expression() -> MLTensor {
            MLTensor(concatenating: [a4, b4], alongAxis: 0).reshaped(to: [64, 4096]).expandingShape(at: 0)
                .mean(alongAxes: [2])
        }
        record(
            "T4", "concat_reshape_mean",
            await WorkloadTimings(
                awaited: { blackHole(await expression().shapedArray(of: Float.self)) },
                blocking: { blackHole(expression().shapedArray(of: Float.self)) },
                extensionPath: { blackHole(expression().materialized()) }))
    }
    // T5 matmul, next to raw cblas_sgemm on the same data
    if wanted("T5") {
        let a5Data = benchmarkData(256 * 512, seed: 6)
        let b5Data = benchmarkData(512 * 1024, seed: 7)
        let a5 = MLTensor(shape: [256, 512], scalars: a5Data)
        let b5 = MLTensor(shape: [512, 1024], scalars: b5Data)
        let t5 = await WorkloadTimings(
            awaited: { blackHole(await a5.matmul(b5).shapedArray(of: Float.self)) },
            blocking: { blackHole(a5.matmul(b5).shapedArray(of: Float.self)) },
            extensionPath: { blackHole(a5.matmul(b5).materialized()) })
        var c5 = [Float](repeating: 0, count: 256 * 1024)
        let raw = measure {
            OpenBLASLibrary.shared.sgemm(
                transposeA: false, transposeB: false, m: 256, n: 1024, k: 512, alpha: 1, a: a5Data, lda: 512,
                b: b5Data, ldb: 1024, beta: 0, c: &c5, ldc: 1024)
        }
        record(
            "T5", "matmul", t5,
            String(
                format: "raw cblas_sgemm (OpenBLAS, 1 thread) %.3f ms; async/raw %.3f", raw.median * 1e3,
                t5.awaited.median / raw.median))
        medians["T5_raw_sgemm"] = raw.median * 1e3
    }
    // T6 chain100_small
    if wanted("T6") {
        let x6 = MLTensor(shape: [16], scalars: benchmarkData(16, seed: 8))
        func chain() -> MLTensor {
            var x = x6
            for _ in 0..<100 { x = x * 1.0001 + 0.0001 }
            return x
        }
        let t6 = await WorkloadTimings(
            iterations: 200,
            awaited: { blackHole(await chain().shapedArray(of: Float.self)) },
            blocking: { blackHole(chain().shapedArray(of: Float.self)) },
            extensionPath: { blackHole(chain().materialized()) })
        record("T6", "chain100_small", t6, String(format: "%.2f µs", t6.awaited.median * 1e6))
    }
    // T7 hypot_16M
    if wanted("T7") {
        let a7 = MLTensor(shape: [16_777_216], scalars: benchmarkData(16_777_216, seed: 9))
        let b7 = MLTensor(shape: [16_777_216], scalars: benchmarkData(16_777_216, seed: 10))
        record(
            "T7", "hypot_16M",
            await WorkloadTimings(
                iterations: 15,
                awaited: { blackHole(await (a7 * a7 + b7 * b7).squareRoot().shapedArray(of: Float.self)) },
                blocking: { blackHole((a7 * a7 + b7 * b7).squareRoot().shapedArray(of: Float.self)) },
                extensionPath: { blackHole((a7 * a7 + b7 * b7).squareRoot().materialized()) }))
    }
    // T8 sampling: softmax(logits / 0.7) -> topK(50) -> cumulative sum of the kept probabilities
    if wanted("T8") {
        let logits = MLTensor(shape: [1, 32000], scalars: benchmarkData(32000, seed: 11).map { $0 * 8 })
        record(
            "T8", "sampling",
            await WorkloadTimings(
                iterations: 100,
                awaited: {
                    let (values, indices) = (logits / 0.7).softmax(alongAxis: -1).topK(50)
                    blackHole(await values.cumulativeSum(alongAxis: -1).shapedArray(of: Float.self))
                    blackHole(await indices.shapedArray(of: Int32.self))
                },
                blocking: {
                    let (values, indices) = (logits / 0.7).softmax(alongAxis: -1).topK(50)
                    blackHole(values.cumulativeSum(alongAxis: -1).shapedArray(of: Float.self))
                    blackHole(indices.shapedArray(of: Int32.self))
                },
                extensionPath: {
                    let (values, indices) = (logits / 0.7).softmax(alongAxis: -1).topK(50)
                    MLTensor.materialize([values.cumulativeSum(alongAxis: -1), indices])
                }))
    }
    // T9 detection_decode: [1, 84, 8400] -> [1, 8400, 84]; best of the 80 class scores; mask > 0.25
    // (read as Int8 by `shapedArray(of:)`'s one converting pass: a fused `cast` of the Bool mask
    // to an integer type takes a slow path, ~0.5 ms here)
    if wanted("T9") {
        let x9 = MLTensor(shape: [1, 84, 8400], scalars: benchmarkData(84 * 8400, seed: 12))
        let classes = x9.transposed(permutation: [0, 2, 1])[nil, nil, 4...]
        record(
            "T9", "detection_decode",
            await WorkloadTimings(
                iterations: 100,
                awaited: {
                    let scores = classes.max(alongAxes: -1)
                    blackHole(await scores.shapedArray(of: Float.self))
                    blackHole(await classes.argmax(alongAxis: -1).shapedArray(of: Int32.self))
                    blackHole(await (scores .> 0.25).shapedArray(of: Int8.self))
                },
                blocking: {
                    let scores = classes.max(alongAxes: -1)
                    blackHole(scores.shapedArray(of: Float.self))
                    blackHole(classes.argmax(alongAxis: -1).shapedArray(of: Int32.self))
                    blackHole((scores .> 0.25).shapedArray(of: Int8.self))
                },
                extensionPath: {
                    let scores = classes.max(alongAxes: -1)
                    MLTensor.materialize([scores, classes.argmax(alongAxis: -1), scores .> 0.25])
                }))
    }
    if wanted("await16") { await runSmallAwaitBenchmarks(into: &medians) }
    return medians
}

/// Writes `{"tessera": {"version": ..., "T1": ms, ...}}` for `Benchmarks/peers/compare.py`.
func writeTensorJSON(_ medians: [String: Double], to path: String) {
    writeTesseraJSON(medians, to: path)
}

/// Parts of T9 timed separately (`TESSERA_BENCH_ONLY=T9parts`), to see where its time goes.
func runT9Parts() {
    let x9 = MLTensor(shape: [1, 84, 8400], scalars: benchmarkData(84 * 8400, seed: 12))
    let classes = x9.transposed(permutation: [0, 2, 1])[nil, nil, 4...]
    report("T9 max only", measure(iterations: 100) { blackHole(classes.max(alongAxes: -1).materialized()) }, "")
    report("T9 argmax only", measure(iterations: 100) { blackHole(classes.argmax(alongAxis: -1).materialized()) }, "")
    report("T9 slice copy", measure(iterations: 100) { blackHole((classes + 0).materialized()) }, "")
    let scores = classes.max(alongAxes: -1).materialized()
    report(
        "T9 mask of computed scores", measure(iterations: 100) { blackHole((scores .> 0.25).materialized()) }, "")
    report(
        "T9 mask of computed scores, cast to Int8 in the graph",
        measure(iterations: 100) { blackHole((scores .> 0.25).cast(to: Int8.self).materialized()) }, "")
    report(
        "T9 mask of computed scores, read as Int8",
        measure(iterations: 100) { blackHole((scores .> 0.25).shapedArray(of: Int8.self)) }, "")
    report(
        "T9 max + argmax, two plans",
        measure(iterations: 100) {
            blackHole(classes.max(alongAxes: -1).materialized())
            blackHole(classes.argmax(alongAxis: -1).materialized())
        }, "")
    report(
        "T9 as awaited, but blocking",
        measure(iterations: 100) {
            let scores = classes.max(alongAxes: -1)
            blackHole(scores.shapedArray(of: Float.self))
            blackHole(classes.argmax(alongAxis: -1).shapedArray(of: Int32.self))
            blackHole((scores .> 0.25).shapedArray(of: Int8.self))
        }, "")
    report(
        "T9 max + argmax, one plan",
        measure(iterations: 100) {
            MLTensor.materialize([classes.max(alongAxes: -1), classes.argmax(alongAxis: -1)])
        }, "")
}
