import Foundation
import TesseraModels
import TesseraMultiArray
import TesseraTensor

/// The compiled cache: load time of an `.mlpackage` against the `.mlmodelc` that
/// `MLModel.compileModel(at:)` makes from it, on models with tens of megabytes of weights
/// (`Benchmarks/peers/make_compile_model.py DIR` makes them with coremltools' MIL builder).
///
/// Two figures per model: *open* is reading the model up to a parsed package with checked
/// weights (for the compiled form: map, verify every checksum, decode, relink); *load* is the
/// whole `MLModel(contentsOf:)`, which adds lowering (weights become tensors). *weights*
/// is open plus every weight as a tensor: converted and copied (`floatValues` →
/// `MLTensor(shape:scalars:)`, what the lowering does today) for the package, adopted in
/// place (`mappedFloat32Tensor`) for the compiled model.
///
/// Then the model workloads' packages (`m1`, `m2`, `m3`, `m4`, `m6`, `m7`): compile time,
/// `MLModel` load of the package against the compiled model, and the first
/// `try await model.prediction(from:)` of a freshly loaded model.
///
/// - Returns: The figures for `--models-json`, per model: `compile_ms`, `package_ms` and
///   `compiled_ms` (the `MLModel` loads); for `compile_fp32`/`compile_fp16` also `compiled_mb`,
///   `open_*_ms` and `weights_*_ms`; for the model workloads also `first_prediction_ms`. A model
///   whose package is missing has no entry.
@discardableResult
func runCompileBenchmarks(modelsDirectory: URL) async -> [String: Any] {
    print("\n## Compiled cache (warm page cache; median of repeated loads)")
    var figures: [String: Any] = [:]
    for name in ["compile_fp32", "compile_fp16"] {
        let package = modelsDirectory.appendingPathComponent("\(name).mlpackage")
        guard FileManager.default.fileExists(atPath: package.path) else {
            print(
                "\(name): no \(package.path); make it with "
                    + "Benchmarks/peers/.venv/bin/python Benchmarks/peers/make_compile_model.py \(modelsDirectory.path)"
            )
            continue
        }
        do {
            let compileStart = DispatchTime.now().uptimeNanoseconds
            let temporary = try await MLModel.compileModel(at: package)
            let compileSeconds = Double(DispatchTime.now().uptimeNanoseconds - compileStart) / 1e9
            defer { try? FileManager.default.removeItem(at: temporary.deletingLastPathComponent()) }
            let compiledBytes =
                (try? FileManager.default.attributesOfItem(
                    atPath: temporary.appendingPathComponent("model.tessera").path)[.size] as? Int) ?? 0
            print(
                String(
                    format: "%@: compile %.1f ms → %.1f MB model.tessera", name, compileSeconds * 1e3,
                    Double(compiledBytes) / 1e6))

            let openPackage = measure(warmups: 2, iterations: 15) { blackHole(try? ModelSource.open(package)) }
            let openCompiled = measure(warmups: 2, iterations: 15) { blackHole(try? ModelSource.open(temporary)) }
            report("\(name) open (package)", openPackage, "")
            report(
                "\(name) open (compiled)", openCompiled,
                String(format: "%.1f× faster", openPackage.median / openCompiled.median))

            let weightsPackage = measure(warmups: 2, iterations: 15) {
                blackHole(try? weightTensors(ModelSource.open(package), adopt: false))
            }
            let weightsCompiled = measure(warmups: 2, iterations: 15) {
                blackHole(try? weightTensors(ModelSource.open(temporary), adopt: true))
            }
            report("\(name) weights copied (package)", weightsPackage, "")
            report(
                "\(name) weights adopted (compiled)", weightsCompiled,
                String(format: "%.1f× faster", weightsPackage.median / weightsCompiled.median))
            var entry: [String: Any] = [
                "compile_ms": compileSeconds * 1e3, "compiled_mb": Double(compiledBytes) / 1e6,
                "open_package_ms": openPackage.median * 1e3, "open_compiled_ms": openCompiled.median * 1e3,
                "weights_package_ms": weightsPackage.median * 1e3, "weights_compiled_ms": weightsCompiled.median * 1e3,
            ]
            defer { figures[name] = entry }

            guard (try? MLModel(contentsOf: package)) != nil else {
                print("\(name) load: MLModel cannot lower this model in this build (an op is not supported yet)")
                continue
            }
            let loadPackage = measure(warmups: 2, iterations: 15) { blackHole(try? MLModel(contentsOf: package)) }
            let loadCompiled = measure(warmups: 2, iterations: 15) { blackHole(try? MLModel(contentsOf: temporary)) }
            report("\(name) MLModel load (package)", loadPackage, "")
            report(
                "\(name) MLModel load (compiled)", loadCompiled,
                String(format: "%.1f× faster", loadPackage.median / loadCompiled.median))
            entry["package_ms"] = loadPackage.median * 1e3
            entry["compiled_ms"] = loadCompiled.median * 1e3
        } catch {
            print("\(name): \(error)")
        }
    }
    let picked = ProcessInfo.processInfo.environment["TESSERA_BENCH_MODELS"].map {
        Set($0.split(separator: ",").map(String.init))
    }
    for name in ["m1", "m2", "m3", "m4", "m6", "m7"] where picked?.contains(name) ?? true {
        let package = modelsDirectory.appendingPathComponent("\(name).mlpackage")
        if let entry = await compareModelLoads(package, name: name, large: ["m2", "m6", "m7"].contains(name)) {
            figures[name] = entry
        }
    }
    return figures
}

/// `MLModel(contentsOf:)` of a package against the same model compiled first by
/// `MLModel.compileModel(at:)` (median of 40 loads, of 5 for a `large` model: a 3 ms load
/// varied by a fifth between runs of 15), and the first
/// `try await model.prediction(from:)` of a freshly loaded model (on `<name>_input.npy` next to
/// the package, when present): work a load leaves for later shows there. Prints them and
/// returns `compile_ms`, `package_ms`, `compiled_ms` and `first_prediction_ms` (medians), or nil
/// when the package is missing or does not load.
private func compareModelLoads(_ package: URL, name: String, large: Bool) async -> [String: Any]? {
    guard FileManager.default.fileExists(atPath: package.path) else {
        print("\(name): no \(package.path); make it with Benchmarks/peers/model_workloads.py --make-models")
        return nil
    }
    do {
        let compileStart = DispatchTime.now().uptimeNanoseconds
        let compiled = try await MLModel.compileModel(at: package)
        let compileMilliseconds = Double(DispatchTime.now().uptimeNanoseconds - compileStart) / 1e6
        defer { try? FileManager.default.removeItem(at: compiled.deletingLastPathComponent()) }
        _ = try MLModel(contentsOf: package)
        _ = try MLModel(contentsOf: compiled)
        let loads = large ? 5 : 40
        let loadPackage = measure(warmups: 1, iterations: loads) { blackHole(try? MLModel(contentsOf: package)) }
        let loadCompiled = measure(warmups: 1, iterations: loads) { blackHole(try? MLModel(contentsOf: compiled)) }
        report("\(name) MLModel load (package)", loadPackage, String(format: "compile %.1f ms", compileMilliseconds))
        report(
            "\(name) MLModel load (compiled)", loadCompiled,
            String(format: "%.1f× faster", loadPackage.median / loadCompiled.median))
        var figures: [String: Any] = [
            "compile_ms": compileMilliseconds, "package_ms": loadPackage.median * 1e3,
            "compiled_ms": loadCompiled.median * 1e3,
        ]
        let inputFile = package.deletingLastPathComponent().appendingPathComponent("\(name)_input.npy")
        if FileManager.default.fileExists(atPath: inputFile.path) {
            let input = try NumPyFile.read(inputFile)
            var samples: [Double] = []
            for _ in 0..<5 {
                let model = try MLModel(contentsOf: package)
                let inputName = model.modelDescription.inputDescriptionsByName.keys.sorted()[0]
                let provider = try MLDictionaryFeatureProvider(dictionary: [
                    inputName: MLFeatureValue(multiArray: input)
                ])
                let start = DispatchTime.now().uptimeNanoseconds
                blackHole(try await model.prediction(from: provider))
                samples.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
            }
            let first = Timing(samples: samples.sorted())
            report("\(name) first prediction after load", first, "median of 5 fresh models")
            figures["first_prediction_ms"] = first.median * 1e3
        }
        return figures
    } catch {
        print("\(name) load: \(error)")
        return nil
    }
}

/// Every blob constant of the package's main function as a tensor: adopted in place when
/// `adopt` and the blob is Float32, else converted and copied.
func weightTensors(_ package: CoreMLPackage, adopt: Bool) throws -> [MLTensor] {
    let block = try package.model.requireMLProgram(file: package.modelDisplayName).function().block()
    var tensors: [MLTensor] = []
    for operation in block.operations where operation.type == "const" {
        guard let value = operation.attributes["val"], let reference = value.blobReference,
            let type = value.type?.tensorType, let shape = type.shape
        else { continue }
        if adopt, let tensor = try package.mappedFloat32Tensor(for: reference, type: type) {
            tensors.append(tensor)
        } else {
            let (file, blob) = try package.blob(for: reference, type: type)
            tensors.append(MLTensor(shape: shape, scalars: try file.floatValues(of: blob)))
        }
    }
    return tensors
}
