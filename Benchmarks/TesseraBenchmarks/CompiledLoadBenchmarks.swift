import Foundation
import TesseraKernels
import TesseraModels
import TesseraMultiArray

/// A compiled model's load with its stored prepared weights (`compiledload`): each model
/// compiled once, then `MLModel(contentsOf:)` on the compiled directory as written (prepared
/// forms mapped) and on a copy without the prepared-weights section (as a file written before
/// it existed: every weight packed at load), the first prediction of a freshly loaded compiled
/// model and a warm one. Models from `TESSERA_BENCH_MODELS` (default `m1`) in the models
/// directory.
func runCompiledLoad(modelsDirectory: URL) async {
    print("\n## Compiled-model load, prepared weights stored vs packed at load")
    let picked = ProcessInfo.processInfo.environment["TESSERA_BENCH_MODELS"]?.split(separator: ",").map(String.init)
    for id in picked ?? ["m1"] {
        let url = modelsDirectory.appendingPathComponent("\(id).mlpackage")
        guard FileManager.default.fileExists(atPath: url.path) else {
            print("\(id): no \(url.path)")
            continue
        }
        do {
            let compiled = try await MLModel.compileModel(at: url)
            let stripped = try strippedCopy(of: compiled)
            defer {
                try? FileManager.default.removeItem(at: compiled.deletingLastPathComponent())
                try? FileManager.default.removeItem(at: stripped.deletingLastPathComponent())
            }
            let iterations = 9
            let packedAtLoad = measure(warmups: 1, iterations: iterations) {
                blackHole(try? MLModel(contentsOf: stripped))
            }
            let mapped = measure(warmups: 1, iterations: iterations) { blackHole(try? MLModel(contentsOf: compiled)) }
            let model = try MLModel(contentsOf: compiled)
            let provider = try benchmarkInput(id, for: model, modelsDirectory: modelsDirectory)
            let first = try await firstPredictions(of: compiled, provider)
            // Weights packed by a compiled load and its first prediction, on every thread they use.
            let (_, packed) = try await PreparedWeights.countingMisses {
                let fresh = try MLModel(contentsOf: compiled)
                return try await fresh.prediction(from: provider)
            }
            let (_, packedWithout) = try await PreparedWeights.countingMisses {
                let fresh = try MLModel(contentsOf: stripped)
                return try await fresh.prediction(from: provider)
            }
            let warm = await measureAsync(warmups: 3, iterations: 10) {
                blackHole(try? await model.prediction(from: provider))
            }
            report(
                "\(id) compiled load, forms stored", mapped,
                String(format: "%.2f× faster than packing at load", packedAtLoad.median / mapped.median))
            report(
                "\(id) compiled load, packed at load", packedAtLoad,
                "no prepared-weights section; weights packed by load + first prediction: \(packedWithout) "
                    + "(with the section: \(packed))")
            report("\(id) compiled first prediction", first, String(format: "%.2f× warm", first.median / warm.median))
            report("\(id) compiled warm prediction", warm, "")
        } catch {
            print("\(id): \(error)")
        }
    }
}

/// A copy of a compiled directory whose `model.tessera` has no prepared-weights section (cut off,
/// its header fields zeroed, the checksums rewritten).
private func strippedCopy(of compiled: URL) throws -> URL {
    let file = compiled.appendingPathComponent(CompiledModelHeader.fileName)
    var bytes = [UInt8](try Data(contentsOf: file))
    let offset = (0..<8).reduce(0) { $0 | Int(bytes[104 + $1]) << (8 * $1) }
    if offset > 0 { bytes.removeSubrange(offset...) }
    for index in 104..<120 { bytes[index] = 0 }
    bytes = CompiledModelHeader.repairingChecksums(bytes)
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-stripped-\(UUID().uuidString)")
    let directory = folder.appendingPathComponent(compiled.lastPathComponent)
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    try Data(bytes).write(to: directory.appendingPathComponent(CompiledModelHeader.fileName))
    return directory
}
