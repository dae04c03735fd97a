import Foundation
import TesseraGraph
import TesseraKernels
import TesseraModels
import TesseraMultiArray
import TesseraTensor

/// The single-prediction workloads, in table order: M1 MobileNetV2, M2 ResNet-50, M3 one
/// transformer encoder layer, M6 a BERT-base encoder, M7 a Whisper-tiny-sized audio encoder. A
/// model whose package is not in the models directory is skipped.
let singlePredictionModels: [(id: String, name: String)] = [
    ("m1", "M1 MobileNetV2"), ("m2", "M2 ResNet-50"), ("m3", "M3 transformer layer"),
    ("m6", "M6 BERT-base encoder"), ("m7", "M7 Whisper-tiny-sized audio encoder"),
]

/// The single-prediction workloads (``singlePredictionModels``): latency of
/// `try await model.prediction(from:)` (as an app awaits it), on
/// the `.mlpackage` files `Benchmarks/peers/model_workloads.py --make-models DIR` writes, with
/// the same input PyTorch and ONNX Runtime are timed on. Also reports the largest difference
/// from PyTorch's output. Then M4 (batches) on M3's model (fixed batch: a loop) and on
/// `m4.mlpackage` (M3's layer with a flexible batch axis: one execution), and M5.
///
/// `TESSERA_BENCH_MODELS` (comma-separated ids, for example `m3,m6`) picks the single-prediction
/// models; `TESSERA_BENCH_SINGLE_ONLY=1` skips M4 and M5 (for the one-thread run of
/// `compare_models.py`); `TESSERA_BENCH_RUNS` sets the timed predictions per model (20 by
/// default, 8 for large models), for A/B runs on a busy machine.
///
/// - Returns: The figures for `--models-json`: per model id (`median_ms`, `best_ms`, `load_ms`,
///   `max_abs_error`, `threads`), `m4` and `m4_on_m3` (per `batchN`: `batched_ms_per_input`,
///   `loop_ms_per_input`), `m5` (ms per prediction concurrent and serial, peak RSS); a model
///   whose package is missing has no entry.
@discardableResult
func runModelBenchmarks(modelsDirectory: URL) async -> [String: Any] {
    print("\n## Model workloads (float32; try await MLModel.prediction(from:), one input)")
    let environment = ProcessInfo.processInfo.environment
    let picked = environment["TESSERA_BENCH_MODELS"].map { Set($0.split(separator: ",").map(String.init)) }
    let singleOnly = environment["TESSERA_BENCH_SINGLE_ONLY"] == "1"
    let runs = environment["TESSERA_BENCH_RUNS"].flatMap { Int($0) }.map { Swift.max(1, $0) }
    var figures: [String: Any] = ["threads": KernelThreads.coreBudget]
    for (id, name) in singlePredictionModels where picked?.contains(id) ?? true {
        let package = modelsDirectory.appendingPathComponent("\(id).mlpackage")
        guard FileManager.default.fileExists(atPath: package.path) else {
            print("\(name): no \(package.path); make it with Benchmarks/peers/model_workloads.py --make-models")
            continue
        }
        do {
            let loadStart = DispatchTime.now().uptimeNanoseconds
            let model = try MLModel(contentsOf: package)
            let loadMilliseconds = Double(DispatchTime.now().uptimeNanoseconds - loadStart) / 1e6
            let input = try NumPyFile.read(modelsDirectory.appendingPathComponent("\(id)_input.npy"))
            let expected = try NumPyFile.read(modelsDirectory.appendingPathComponent("\(id)_expected.npy"))
            let inputName = model.modelDescription.inputDescriptionsByName.keys.sorted()[0]
            let outputName = model.modelDescription.outputDescriptionsByName.keys.sorted()[0]
            let provider = try MLDictionaryFeatureProvider(dictionary: [inputName: MLFeatureValue(multiArray: input)])
            var output: (any MLFeatureProvider)?
            // Large models (a first prediction over 50 ms): fewer runs, as model_workloads.py does.
            let firstStart = DispatchTime.now().uptimeNanoseconds
            output = try await model.prediction(from: provider)
            let large = Double(DispatchTime.now().uptimeNanoseconds - firstStart) > 50e6
            let timing = await measureAsync(warmups: large ? 1 : 3, iterations: runs ?? (large ? 8 : 20)) {
                output = try? await model.prediction(from: provider)
            }
            guard let result = output?.featureValue(for: outputName)?.multiArrayValue else {
                print("\(name): the prediction failed")
                continue
            }
            let got = MLShapedArray<Float>(converting: result).scalars
            let want = MLShapedArray<Float>(converting: expected).scalars
            let error = zip(got, want).map { abs($0 - $1) }.max() ?? .nan
            report(name, timing, String(format: "load %.1f ms; max |Δ| vs PyTorch %.2g", loadMilliseconds, error))
            print("    plan: \(GraphExecutor.lastStatistics)")
            figures[id] = [
                "median_ms": timing.median * 1e3, "best_ms": timing.best * 1e3, "load_ms": loadMilliseconds,
                "max_abs_error": jsonNumber(Double(error)), "threads": KernelThreads.coreBudget,
            ]
            if id == "m3" && !singleOnly {
                let (batches, concurrency) = runBatchAndConcurrency(model: model, provider: provider)
                figures["m4_on_m3"] = batches
                figures["m5"] = concurrency
            }
        } catch {
            print("\(name): \(error)")
        }
    }
    if !singleOnly { figures["m4"] = runFlexibleBatch(modelsDirectory: modelsDirectory) }
    return figures
}

/// A finite number as itself, anything else as JSON's `null` (JSONSerialization rejects NaN).
func jsonNumber(_ value: Double) -> Any { value.isFinite ? value : NSNull() }

/// Writes `{"tessera": {"version": ..., "models": {...}, "compile": {...}}}` for
/// `Benchmarks/peers/compare_models.py`; an area that did not run is left out.
func writeModelsJSON(models: [String: Any]?, compile: [String: Any]?, to path: String) {
    var fields: [String: Any] = [:]
    if let models { fields["models"] = models }
    if let compile { fields["compile"] = compile }
    writeTesseraJSON(fields, to: path)
}

/// M4 on `m4.mlpackage` (dimension 0 a RangeDim(1, 64)): `predictions(fromBatch:)` with 1, 8 and
/// 32 inputs, which runs a batch as one execution, next to a loop of single predictions; says
/// whether the batch did run as one and the largest difference from PyTorch's output.
///
/// - Returns: Per `batchN`, ms per input batched and looped, whether the batch ran as one
///   execution and the error; nil when the package is missing or does not load.
private func runFlexibleBatch(modelsDirectory: URL) -> [String: Any]? {
    let name = "M4 flexible-batch transformer layer"
    let package = modelsDirectory.appendingPathComponent("m4.mlpackage")
    guard FileManager.default.fileExists(atPath: package.path) else {
        print("\(name): no \(package.path); make it with Benchmarks/peers/model_workloads.py --make-models")
        return nil
    }
    var figures: [String: Any] = [:]
    do {
        let model = try MLModel(contentsOf: package)
        let input = try NumPyFile.read(modelsDirectory.appendingPathComponent("m4_input.npy"))
        let expected = MLShapedArray<Float>(
            converting: try NumPyFile.read(modelsDirectory.appendingPathComponent("m4_expected.npy"))
        ).scalars
        let provider = try MLDictionaryFeatureProvider(dictionary: ["input": MLFeatureValue(multiArray: input)])
        for size in [1, 8, 32] {
            let batch = MLArrayBatchProvider(array: Array(repeating: provider, count: size))
            let before = model.batchedExecutionCount
            var outputs: (any MLBatchProvider)?
            let batched = measure(warmups: 1, iterations: 5) { outputs = try? model.predictions(fromBatch: batch) }
            let oneExecution = model.batchedExecutionCount > before
            let loop = measure(warmups: 1, iterations: 5) {
                for _ in 0..<size { _ = try? model.prediction(from: provider) }
            }
            var error: Float = 0
            for index in 0..<(outputs?.count ?? 0) {
                guard let array = outputs?.features(at: index).featureValue(for: "output")?.multiArrayValue else {
                    continue
                }
                let got = MLShapedArray<Float>(converting: array).scalars
                error = max(error, zip(got, expected).map { abs($0 - $1) }.max() ?? .nan)
            }
            report(
                "M4 flexible batch of \(size)", batched,
                String(format: "%.3f ms per input", batched.median * 1e3 / Double(size))
                    + (oneExecution ? " (one execution)" : " (a loop)")
                    + String(
                        format: "; loop of singles %.3f ms per input; max |Δ| vs PyTorch %.2g",
                        loop.median * 1e3 / Double(size), error))
            figures["batch\(size)"] = [
                "batched_ms_per_input": batched.median * 1e3 / Double(size),
                "loop_ms_per_input": loop.median * 1e3 / Double(size), "one_execution": oneExecution,
                "max_abs_error": jsonNumber(Double(error)),
            ]
        }
    } catch {
        print("\(name): \(error)")
        return nil
    }
    return figures
}

/// M4 (batch throughput: `predictions(fromBatch:)` with 1, 8 and 32 inputs next to a loop of
/// single predictions) and M5 (8 tasks predicting on one shared model), on M3's model. Its
/// batch dimension is fixed at 1, so these batches run as a loop; `runFlexibleBatch` times
/// batches that run as one execution.
///
/// - Returns: M4's figures per `batchN` (ms per input batched and looped) and M5's (ms per
///   prediction concurrent and serial, the process's peak RSS in MB).
private func runBatchAndConcurrency(
    model: MLModel, provider: MLDictionaryFeatureProvider
) -> (batches: [String: Any], concurrency: [String: Any]) {
    var batches: [String: Any] = [:]
    for size in [1, 8, 32] {
        let batch = MLArrayBatchProvider(array: Array(repeating: provider, count: size))
        let batched = measure(warmups: 1, iterations: 5) { _ = try? model.predictions(fromBatch: batch) }
        let loop = measure(warmups: 1, iterations: 5) {
            for _ in 0..<size { _ = try? model.prediction(from: provider) }
        }
        report(
            "M4 on M3 (fixed: loop) batch of \(size)", batched,
            String(
                format: "%.3f ms per input; loop of singles %.3f ms per input", batched.median * 1e3 / Double(size),
                loop.median * 1e3 / Double(size)))
        batches["batch\(size)"] = [
            "batched_ms_per_input": batched.median * 1e3 / Double(size),
            "loop_ms_per_input": loop.median * 1e3 / Double(size),
        ]
    }
    // M5: 8 tasks × 8 predictions each on one model, next to the same 64 predictions serially.
    let perTask = 8
    // Feature providers are not Sendable (as on Apple's platforms): each thread gets its own.
    let providers = ThreadProviders(
        (0..<8).compactMap { _ in
            try? MLDictionaryFeatureProvider(
                dictionary: provider.dictionary.mapValues { MLFeatureValue(multiArray: $0.multiArrayValue!) })
        })
    let concurrent = measure(warmups: 1, iterations: 5) {
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for _ in 0..<perTask { _ = try? model.prediction(from: providers.value[thread]) }
        }
    }
    let serial = measure(warmups: 1, iterations: 5) {
        for _ in 0..<(8 * perTask) { _ = try? model.prediction(from: provider) }
    }
    var usage = rusage()
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    report(
        "M5 8 threads × \(perTask) predictions", concurrent,
        String(
            format: "%.3f ms per prediction; serial %.3f ms; peak RSS of the process %.0f MB",
            concurrent.median * 1e3 / Double(8 * perTask), serial.median * 1e3 / Double(8 * perTask),
            Double(usage.ru_maxrss) / 1024))
    let concurrency: [String: Any] = [
        "threads": 8, "predictions_per_thread": perTask,
        "concurrent_ms_per_prediction": concurrent.median * 1e3 / Double(8 * perTask),
        "serial_ms_per_prediction": serial.median * 1e3 / Double(8 * perTask),
        "peak_rss_mb": Double(usage.ru_maxrss) / 1024,
    ]
    return (batches, concurrency)
}

/// One feature provider per thread; each thread touches only its own.
private struct ThreadProviders: @unchecked Sendable {
    let value: [MLDictionaryFeatureProvider]
    init(_ value: [MLDictionaryFeatureProvider]) { self.value = value }
}
