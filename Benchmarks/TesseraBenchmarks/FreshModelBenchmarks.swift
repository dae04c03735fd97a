import Foundation
import TesseraModels
import TesseraMultiArray

/// The input of benchmark model `id` (`<id>_input.npy` in `modelsDirectory`) bound to `model`'s
/// first input by name, as the load benchmarks (`loadparts`, `compiledload`) feed it.
func benchmarkInput(_ id: String, for model: MLModel, modelsDirectory: URL) throws -> MLDictionaryFeatureProvider {
    let input = try NumPyFile.read(modelsDirectory.appendingPathComponent("\(id)_input.npy"))
    let inputName = model.modelDescription.inputDescriptionsByName.keys.sorted()[0]
    return try MLDictionaryFeatureProvider(dictionary: [inputName: MLFeatureValue(multiArray: input)])
}

/// The first `try await prediction(from:)` of `count` freshly loaded models at `url` (the load
/// itself not timed).
func firstPredictions(of url: URL, _ provider: MLDictionaryFeatureProvider, count: Int = 5) async throws -> Timing {
    var samples: [Double] = []
    for _ in 0..<count {
        let fresh = try MLModel(contentsOf: url)
        let start = DispatchTime.now().uptimeNanoseconds
        blackHole(try await fresh.prediction(from: provider))
        samples.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
    }
    return Timing(samples: samples.sorted())
}
