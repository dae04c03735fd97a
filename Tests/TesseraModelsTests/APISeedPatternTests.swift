import Foundation
import TesseraModels
import TesseraMultiArray
import TesseraTensor
import Testing

/// Core ML app code as it is commonly written on a Mac (compile once and cache, load, predict,
/// read a classifier's outputs), compiled and run unchanged.
@Suite("API: common Core ML app patterns")
struct APISeedPatternTests {
    @Test("compile once, cache, load, predict, read the classifier's outputs")
    func cachingPattern() async throws {
        #expect(URL.applicationSupportDirectory.path.isEmpty == false)
        let scratch = try TemporaryDirectory()
        // Stands in for URL.applicationSupportDirectory.
        let appSupport = scratch.url.appendingPathComponent("Application Support")
        let cachedURL = appSupport.appendingPathComponent("DigitsClassifier.mlmodelc")
        for _ in 0..<2 {  // the second launch finds the cache
            if !FileManager.default.fileExists(atPath: cachedURL.path) {
                let compiledURL = try await MLModel.compileModel(at: DigitsDemo.packageURL)
                try FileManager.default.createDirectory(at: appSupport, withIntermediateDirectories: true)
                try FileManager.default.moveItem(at: compiledURL, to: cachedURL)
            }
            let config = MLModelConfiguration()
            config.computeUnits = .cpuAndNeuralEngine
            let model = try await MLModel.load(contentsOf: cachedURL, configuration: config)
            _ = model.modelDescription.inputDescriptionsByName

            let sample = DigitsDemo.samples.samples[7]
            let ma = try MLMultiArray(shape: [1, 64], dataType: .float32)
            for (index, pixel) in sample.pixels.enumerated() {
                ma[[0, index] as [NSNumber]] = NSNumber(value: Float(pixel) / 16)
            }
            let input = try MLDictionaryFeatureProvider(dictionary: ["image": MLFeatureValue(multiArray: ma)])
            let out = try await model.prediction(from: input)
            let label = out.featureValue(for: "classLabel")?.stringValue
            let probs = out.featureValue(for: "classLabel_probs")?.dictionaryValue
            #expect(label == sample.label)
            #expect((probs?[sample.label]?.doubleValue ?? 0) > 0.5)

            let batch = MLArrayBatchProvider(array: [input, input])
            let results = try model.predictions(fromBatch: batch)
            #expect(results.features(at: 1).featureValue(for: "classLabel")?.stringValue == sample.label)
        }
    }

    @Test("synchronous loading and prediction with options")
    func synchronous() throws {
        let compiled = try MLModel.compileModel(at: DigitsDemo.packageURL)
        defer { try? FileManager.default.removeItem(at: compiled.deletingLastPathComponent()) }
        let model = try MLModel(contentsOf: compiled, configuration: MLModelConfiguration())
        let sample = DigitsDemo.samples.samples[8]
        let values = MLShapedArray<Float>(scalars: sample.pixels.map { Float($0) / 16 }, shape: [1, 64])
        let input = try MLDictionaryFeatureProvider(dictionary: ["image": MLMultiArray(values)])
        let options = MLPredictionOptions()
        options.usesCPUOnly = true
        let output = try model.prediction(from: input, options: options)
        #expect(output.featureValue(for: "classLabel")?.stringValue == sample.label)
    }
}
