import Foundation
import TesseraModels
import TesseraMultiArray
import TesseraTensor

/// M1 (MobileNetV2) and M3 (one transformer encoder layer): single-prediction latency through
/// `MLModel`, on the `.mlpackage` files `Benchmarks/peers/model_workloads.py --make-models DIR`
/// writes, with the same input PyTorch and ONNX Runtime are timed on. Also reports the largest
/// difference from PyTorch's output.
func runModelBenchmarks(modelsDirectory: URL) {
    print("\n## Model workloads (float32; MLModel.prediction(from:), one input)")
    for (id, name) in [("m1", "M1 MobileNetV2"), ("m3", "M3 transformer layer")] {
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
            let timing = measure(warmups: 3, iterations: 20) {
                output = try? model.prediction(from: provider)
            }
            guard let result = output?.featureValue(for: outputName)?.multiArrayValue else {
                print("\(name): the prediction failed")
                continue
            }
            let got = MLShapedArray<Float>(converting: result).scalars
            let want = MLShapedArray<Float>(converting: expected).scalars
            let error = zip(got, want).map { abs($0 - $1) }.max() ?? .nan
            report(name, timing, String(format: "load %.1f ms; max |Δ| vs PyTorch %.2g", loadMilliseconds, error))
        } catch {
            print("\(name): \(error)")
        }
    }
}
