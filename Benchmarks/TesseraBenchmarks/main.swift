import Foundation
import TesseraKernels

// Benchmarks, run in release mode: `make bench` (or `swift run -c release TesseraBenchmarks`).
// Arguments: area names to run only some (tensor, elementwise, reduction, linalg, conv, copy,
// multiarray, models, compile, classic; t9parts times the pieces of T9), `--json PATH` to write the tensor
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

print(
    "Tessera benchmarks: \(KernelThreads.coreBudget) threads, OpenBLAS core \(KernelThreads.blasCoreName); "
        + "median of repeated runs, ± interquartile range")
if wants("tensor") {
    let medians = runTensorBenchmarks()
    if let jsonPath { writeTensorJSON(medians, to: jsonPath) }
}
if arguments.contains("t9parts") { runT9Parts() }
if wants("elementwise") { runElementwiseBenchmarks() }
if wants("reduction") { runReductionBenchmarks() }
if wants("linalg") { runLinearAlgebraBenchmarks() }
if wants("conv") { runConvolutionBenchmarks() }
if wants("copy") { runCopyBenchmarks() }
if wants("multiarray") { runMultiArrayBenchmarks() }
var modelFigures: [String: Any]?
var compileFigures: [String: Any]?
if selected.contains("models") || modelsDirectory != nil {
    modelFigures = runModelBenchmarks(
        modelsDirectory: URL(fileURLWithPath: modelsDirectory ?? "Benchmarks/peers/models"))
}
if selected.contains("compile") {
    compileFigures = runCompileBenchmarks(
        modelsDirectory: URL(fileURLWithPath: modelsDirectory ?? "Benchmarks/peers/models"))
}
if selected.contains("classic") {
    runClassicBenchmarks(modelsDirectory: URL(fileURLWithPath: modelsDirectory ?? "Benchmarks/peers/models"))
}
if let modelsJSONPath { writeModelsJSON(models: modelFigures, compile: compileFigures, to: modelsJSONPath) }
