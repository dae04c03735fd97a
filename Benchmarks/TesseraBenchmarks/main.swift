import Foundation
import TesseraKernels
import TesseraTensor

// Benchmarks, run in release mode: `make bench` (or `swift run -c release TesseraBenchmarks`).
// Arguments: area names to run only some (tensor, elementwise, reduction, linalg, conv, winograd, attention, copy,
// multiarray, models, compile, classic; t9parts times the pieces of T9, loadparts the phases of a
// model load, loadloop one model loaded repeatedly (for a profiler), compiledload a compiled model's load with and without its stored prepared weights;
// roundtrip, alone, a cache line's round trip between two threads' cores), `--json PATH` to write the tensor
// workloads' medians for Benchmarks/peers/compare.py, and `--models-dir DIR` for the model
// workloads (made by Benchmarks/peers/model_workloads.py --make-models DIR) and the compile
// workloads (made by Benchmarks/peers/make_compile_model.py DIR) and the classic workloads (made by
// Benchmarks/peers/classic_trees.py DIR --make-models). `--models-json PATH` writes the
// figures of the models and compile areas (whichever ran) to one file for
// Benchmarks/peers/compare_models.py; `--json` stays the tensor area's.
var arguments = Array(CommandLine.arguments.dropFirst())
var jsonPath: String?
if let flag = arguments.firstIndex(of: "--json"), flag + 1 < arguments.count {
    jsonPath = arguments[flag + 1]
    arguments.removeSubrange(flag...(flag + 1))
}
var modelsJSONPath: String?
if let flag = arguments.firstIndex(of: "--models-json"), flag + 1 < arguments.count {
    modelsJSONPath = arguments[flag + 1]
    arguments.removeSubrange(flag...(flag + 1))
}
var modelsDirectory: String?
if let flag = arguments.firstIndex(of: "--models-dir"), flag + 1 < arguments.count {
    modelsDirectory = arguments[flag + 1]
    arguments.removeSubrange(flag...(flag + 1))
}
let selected = Set(arguments)
func wants(_ area: String) -> Bool { selected.isEmpty || selected.contains(area) }
// Before anything can start Tessera's kernel threads, which would spin on the same cores.
if selected.contains("roundtrip") {
    runRoundTrip()
    exit(0)
}

print(
    "Tessera benchmarks: \(KernelThreads.coreBudget) threads, OpenBLAS \(KernelThreads.blasSummary); "
        + "median of repeated runs, ± interquartile range")
if wants("tensor") {
    // The workloads run in a nonisolated async function, as code that awaits results does: one
    // hop from the main actor to the cooperative pool, then every await runs on that thread.
    let hopStart = DispatchTime.now().uptimeNanoseconds
    let firstAwait = await measureFirstAwait()
    let withHop = Double(DispatchTime.now().uptimeNanoseconds - hopStart) / 1e9
    print(
        String(
            format: "first await of the process %.3f ms (%.3f ms with the first hop off the main actor); "
                + "the same again %.3f ms", firstAwait.first * 1e3, withHop * 1e3 - firstAwait.second * 1e3,
            firstAwait.second * 1e3))
    var medians = await runTensorBenchmarks()
    // From the main actor (top-level code) every await of a nonisolated async function hops to
    // the cooperative pool and back.
    let folded = MLTensor(shape: [16], scalars: benchmarkData(16, seed: 8)) * 2
    var fromMain: [Double] = []
    for _ in 0..<20 {
        let start = DispatchTime.now().uptimeNanoseconds
        for _ in 0..<50 { blackHole(await awaitedElements(folded)) }
        fromMain.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 50e3)
    }
    fromMain.sort()
    medians["await16_inline_main_actor"] = fromMain[fromMain.count / 2]
    print(
        String(
            format: "%@ %9.3f µs per call (two thread hops)",
            "await a 16-element result from the main actor".padding(toLength: 44, withPad: " ", startingAt: 0),
            fromMain[fromMain.count / 2]))
    medians["first_await"] = firstAwait.first * 1e3
    medians["second_await"] = firstAwait.second * 1e3
    if let jsonPath { writeTensorJSON(medians, to: jsonPath) }
}
if arguments.contains("t9parts") { runT9Parts() }
if wants("elementwise") { runElementwiseBenchmarks() }
if wants("reduction") { runReductionBenchmarks() }
if wants("linalg") { runLinearAlgebraBenchmarks() }
if wants("conv") { runConvolutionBenchmarks() }
if selected.contains("winograd") { runWinogradBenchmarks() }
if selected.contains("attention") { runAttentionBenchmarks() }
if wants("copy") { runCopyBenchmarks() }
if wants("multiarray") { runMultiArrayBenchmarks() }
var modelFigures: [String: Any]?
var compileFigures: [String: Any]?
if selected.contains("models") || modelsDirectory != nil {
    modelFigures = await runModelBenchmarks(
        modelsDirectory: URL(fileURLWithPath: modelsDirectory ?? ".build/bench-models"))
}
if selected.contains("compile") {
    compileFigures = await runCompileBenchmarks(
        modelsDirectory: URL(fileURLWithPath: modelsDirectory ?? ".build/bench-models"))
}
if selected.contains("loadparts") {
    await runLoadParts(modelsDirectory: URL(fileURLWithPath: modelsDirectory ?? ".build/bench-models"))
}
if selected.contains("loadloop") {
    await runLoadLoop(modelsDirectory: URL(fileURLWithPath: modelsDirectory ?? ".build/bench-models"))
}
if selected.contains("compiledload") {
    await runCompiledLoad(modelsDirectory: URL(fileURLWithPath: modelsDirectory ?? ".build/bench-models"))
}
if selected.contains("classic") {
    runClassicBenchmarks(modelsDirectory: URL(fileURLWithPath: modelsDirectory ?? "Benchmarks/peers/models"))
}
if let modelsJSONPath { writeModelsJSON(models: modelFigures, compile: compileFigures, to: modelsJSONPath) }
