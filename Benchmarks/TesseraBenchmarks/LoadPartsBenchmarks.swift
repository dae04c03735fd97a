import Foundation
import TesseraModels
import TesseraMultiArray
import TesseraTensor

/// Where a model's load goes (`loadparts`): `MLModel(contentsOf:)` taken apart into its phases
/// — opening the package (manifest, protobuf, MIL program, weight mapping), the description,
/// the lowering, the build check on the declared shapes and the preparation (plan compiled,
/// constant weights packed) — each the median of repeated runs on a freshly opened package, next
/// to the whole load, the first prediction of a freshly loaded model and a warm one. Models from
/// `TESSERA_BENCH_MODELS` (default `m1`) in the models directory; with `TESSERA_BENCH_COMPILED=1`
/// each model is compiled first and the phases are those of the compiled model's load (opening
/// then maps, verifies, decodes and relinks `model.tessera`).
func runLoadParts(modelsDirectory: URL) async {
    let compiledMode = ProcessInfo.processInfo.environment["TESSERA_BENCH_COMPILED"] == "1"
    print(
        "\n## Load phases (median of repeated runs, each on a freshly opened "
            + (compiledMode ? "compiled model)" : "package)"))
    let picked = ProcessInfo.processInfo.environment["TESSERA_BENCH_MODELS"]?.split(separator: ",").map(String.init)
    for id in picked ?? ["m1"] {
        let packageURL = modelsDirectory.appendingPathComponent("\(id).mlpackage")
        guard FileManager.default.fileExists(atPath: packageURL.path) else {
            print("\(id): no \(packageURL.path)")
            continue
        }
        do {
            let url = compiledMode ? try await MLModel.compileModel(at: packageURL) : packageURL
            defer { if compiledMode { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) } }
            let model = try MLModel(contentsOf: url)
            let shapes = model.modelDescription.inputDescriptionsByName.mapValues {
                $0.multiArrayConstraint?.shape.map(\.intValue) ?? []
            }
            let open = measure(warmups: 2, iterations: 15) { blackHole(try? ModelSource.open(url)) }
            let package = try ModelSource.open(url)
            let describe = measure(warmups: 2, iterations: 15) {
                blackHole(try? MLModelDescription(package.model, functionName: nil))
            }
            let lower = measure(warmups: 2, iterations: 15) {
                blackHole(try? LoweredFunction(package: package, functionName: "main"))
            }
            let function = try LoweredFunction(package: package, functionName: "main")
            let check = measure(warmups: 2, iterations: 15) {
                blackHole(try? function.checkBuilds(inputShapes: shapes))
            }
            var prepareSamples: [Double] = []
            for _ in 0..<15 {
                let fresh = try LoweredFunction(package: try ModelSource.open(url), functionName: "main")
                let outputs = try fresh.checkBuilds(inputShapes: shapes) ?? [:]
                let start = DispatchTime.now().uptimeNanoseconds
                MLTensor.prepare(outputs.keys.sorted().map { outputs[$0]! })
                prepareSamples.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
            }
            let load = measure(warmups: 2, iterations: 15) { blackHole(try? MLModel(contentsOf: url)) }
            report(
                "\(id) open", open,
                compiledMode
                    ? "mapped, verified, decoded, relinked" : "manifest, protobuf, MIL program, weights mapped")
            report("\(id) description", describe, "")
            report("\(id) lowering", lower, "")
            report("\(id) build check", check, "")
            report("\(id) preparation", Timing(samples: prepareSamples.sorted()), "plan and packed weights")
            report("\(id) MLModel load", load, "")
            let provider = try benchmarkInput(id, for: model, modelsDirectory: modelsDirectory)
            let first = try await firstPredictions(of: url, provider)
            let warm = await measureAsync(warmups: 3, iterations: 10) {
                blackHole(try? await model.prediction(from: provider))
            }
            report("\(id) first prediction", first, String(format: "%.2f× warm", first.median / warm.median))
            report("\(id) warm prediction", warm, "")
        } catch {
            print("\(id): \(error)")
        }
    }
}

/// Loads one model over and over (`loadloop`), for a profiler: `TESSERA_BENCH_MODELS` (the first,
/// default `m1`), compiled first with `TESSERA_BENCH_COMPILED=1`, `TESSERA_BENCH_LOADS` times
/// (default 200); prints the median.
func runLoadLoop(modelsDirectory: URL) async {
    let environment = ProcessInfo.processInfo.environment
    let id = environment["TESSERA_BENCH_MODELS"]?.split(separator: ",").first.map(String.init) ?? "m1"
    let loads = environment["TESSERA_BENCH_LOADS"].flatMap { Int($0) } ?? 200
    let packageURL = modelsDirectory.appendingPathComponent("\(id).mlpackage")
    do {
        let compiledMode = environment["TESSERA_BENCH_COMPILED"] == "1"
        let url = compiledMode ? try await MLModel.compileModel(at: packageURL) : packageURL
        defer { if compiledMode { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) } }
        let load = measure(warmups: 2, iterations: loads) { blackHole(try? MLModel(contentsOf: url)) }
        report("\(id) MLModel load \(compiledMode ? "(compiled)" : "(package)")", load, "\(loads) loads")
    } catch {
        print("\(id): \(error)")
    }
}
