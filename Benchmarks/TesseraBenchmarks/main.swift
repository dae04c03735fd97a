import Foundation
import TesseraKernels

// Kernel benchmarks, run in release mode: `make bench` (or `swift run -c release TesseraBenchmarks`).
// Pass area names to run only some: elementwise, reduction, linalg, copy.
let selected = Set(CommandLine.arguments.dropFirst())
func wants(_ area: String) -> Bool { selected.isEmpty || selected.contains(area) }

print(
    "Tessera kernel benchmarks: \(KernelThreads.coreBudget) threads, OpenBLAS core \(KernelThreads.blasCoreName); median of repeated runs, ± interquartile range"
)
if wants("elementwise") { runElementwiseBenchmarks() }
if wants("reduction") { runReductionBenchmarks() }
if wants("linalg") { runLinearAlgebraBenchmarks() }
if wants("copy") { runCopyBenchmarks() }
