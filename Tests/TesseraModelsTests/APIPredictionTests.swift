import Foundation
import TesseraModels
import TesseraMultiArray
import TesseraTensor
import Testing
import _TesseraTestSupport

@Suite("API: predictions")
struct APIPredictionTests {
    @Test("the digits classifier matches NumPy on every held-out sample")
    func digits() throws {
        let model = try MLModel(contentsOf: DigitsDemo.packageURL)
        #expect(model.modelDescription.classLabels as? [String] == DigitsDemo.samples.labels)
        for sample in DigitsDemo.samples.samples {
            let output = try model.prediction(from: DigitsDemo.input(sample))
            #expect(output.featureNames == ["classLabel", "classLabel_probs"])
            let probabilities = try #require(output.featureValue(for: "classLabel_probs")?.dictionaryValue)
            #expect(probabilities.count == 10)
            for (label, expected) in zip(DigitsDemo.samples.labels, sample.probabilities) {
                let got = try #require(probabilities[label]?.doubleValue)
                #expect(abs(got - expected) <= 1e-5 + 1e-4 * abs(expected), "label \(label)")
            }
            let best = DigitsDemo.samples.labels[
                sample.probabilities.indices.max { sample.probabilities[$0] < sample.probabilities[$1] }!]
            #expect(output.featureValue(for: "classLabel")?.stringValue == best)
        }
    }

    @Test("async prediction returns what the synchronous one does")
    func asyncPrediction() async throws {
        let model = try await MLModel.load(contentsOf: DigitsDemo.packageURL)
        let sample = DigitsDemo.samples.samples[3]
        let output = try await model.prediction(from: DigitsDemo.input(sample))
        let sync = try Self.predictSynchronously(model, DigitsDemo.input(sample))
        #expect(
            output.featureValue(for: "classLabel")?.stringValue == sync.featureValue(for: "classLabel")?.stringValue)
        #expect(output.featureValue(for: "classLabel")?.stringValue == sample.label)
        let options = try await model.prediction(from: DigitsDemo.input(sample), options: MLPredictionOptions())
        #expect(options.featureValue(for: "classLabel_probs")?.dictionaryValue.count == 10)
    }

    static func predictSynchronously(_ model: MLModel, _ input: any MLFeatureProvider) throws -> any MLFeatureProvider {
        try model.prediction(from: input, options: MLPredictionOptions())
    }

    @Test("a model predicts from a main-actor context")
    @MainActor
    func mainActor() async throws {
        let model = try await MLModel.load(contentsOf: DigitsDemo.packageURL, configuration: MLModelConfiguration())
        let input = try DigitsDemo.input(DigitsDemo.samples.samples[0])
        let output = try await model.prediction(from: input)
        #expect(output.featureValue(for: "classLabel")?.stringValue == DigitsDemo.samples.samples[0].label)
    }

    @Test("fixture models match NumPy", arguments: ["linear_relu_softmax", "flexible_shapes"])
    func fixtures(_ name: String) throws {
        let expected = try #require(APIExpected.all[name])
        let model = try MLModel(contentsOf: modelFixture("\(name).mlpackage"))
        let output = try model.prediction(from: expected.provider())
        for (outputName, reference) in expected.outputs {
            let array = try #require(output.featureValue(for: outputName)?.multiArrayValue, "\(outputName)")
            #expect(array.dataType == .float32)
            #expect(array.shape.map(\.intValue) == reference.shape)
            let got = MLShapedArray<Float>(array).scalars
            #expect(got.count == reference.values.count)
            for (g, e) in zip(got, reference.values) {
                #expect(abs(Double(g) - e) <= 1e-5 + 1e-4 * abs(e), "\(outputName)")
            }
        }
    }

    @Test("the classifier fixture returns a label and a probability per class")
    func classifier() throws {
        let expected = try #require(APIExpected.all["classifier"])
        let model = try MLModel(contentsOf: modelFixture("classifier.mlpackage"))
        let output = try model.prediction(from: expected.provider())
        #expect(output.featureValue(for: "classLabel")?.type == .string)
        #expect(output.featureValue(for: "classLabel")?.stringValue == expected.classLabel)
        let probabilities = try #require(output.featureValue(for: "classLabel_probs")?.dictionaryValue)
        let reference = try #require(expected.outputs["classLabel_probs"]).values
        for (label, e) in zip(["cat", "dog", "bird"], reference) {
            let got = try #require(probabilities[label]?.doubleValue)
            #expect(abs(got - e) <= 1e-5 + 1e-4 * abs(e))
        }
    }

    @Test("a classifier with Int64 labels returns an int64 label and Int64 keys")
    func int64Classifier() throws {
        let expected = try #require(APIExpected.all["int_classifier"])
        let model = try MLModel(contentsOf: modelFixture("int_classifier.mlpackage"))
        let description = model.modelDescription
        #expect(description.classLabels as? [Int64] == [10, 20, 30])
        let labelName = try #require(description.predictedFeatureName)
        let probabilitiesName = try #require(description.predictedProbabilitiesName)
        #expect(labelName == "label")
        #expect(description.outputDescriptionsByName[labelName]?.type == .int64)
        #expect(description.outputDescriptionsByName[probabilitiesName]?.dictionaryConstraint?.keyType == .int64)

        let output = try model.prediction(from: expected.provider())
        let label = try #require(output.featureValue(for: labelName))
        #expect(label.type == .int64)
        #expect("\(label.int64Value)" == expected.classLabel)
        let probabilities = try #require(output.featureValue(for: probabilitiesName)?.dictionaryValue)
        let reference = try #require(expected.outputs[probabilitiesName]).values
        for (key, e) in zip([Int64(10), 20, 30], reference) {
            let got = try #require(probabilities[AnyHashable(key)]?.doubleValue)
            #expect(abs(got - e) <= 1e-5 + 1e-4 * abs(e))
        }
        #expect(
            description.outputDescriptionsByName[probabilitiesName]?.isAllowedValue(
                try #require(output.featureValue(for: probabilitiesName))) == true)
    }

    @Test("batch predictions return one output per input, in order")
    func batch() throws {
        let model = try MLModel(contentsOf: DigitsDemo.packageURL)
        let samples = Array(DigitsDemo.samples.samples.prefix(5))
        let batch = MLArrayBatchProvider(array: try samples.map(DigitsDemo.input))
        let outputs = try model.predictions(fromBatch: batch)
        #expect(outputs.count == 5)
        let optioned = try model.predictions(from: batch, options: MLPredictionOptions())
        for (index, sample) in samples.enumerated() {
            #expect(outputs.features(at: index).featureValue(for: "classLabel")?.stringValue == sample.label)
            #expect(optioned.features(at: index).featureValue(for: "classLabel")?.stringValue == sample.label)
        }
    }

    @Test("a multi-array of another data type is converted")
    func convertsDataType() throws {
        let model = try MLModel(contentsOf: DigitsDemo.packageURL)
        let sample = DigitsDemo.samples.samples[1]
        let doubles = MLShapedArray<Double>(scalars: sample.pixels.map { Double($0) / 16 }, shape: [1, 64])
        let output = try model.prediction(from: MLDictionaryFeatureProvider(dictionary: ["image": doubles]))
        #expect(output.featureValue(for: "classLabel")?.stringValue == sample.label)
    }

    @Test("a padded multi-array input (explicit strides) predicts like a contiguous one")
    func stridedInput() throws {
        let model = try MLModel(contentsOf: DigitsDemo.packageURL)
        let sample = DigitsDemo.samples.samples[9]
        let padded = MLMultiArray(shape: [1, 64], dataType: .float32, strides: [128, 2])
        for (index, pixel) in sample.pixels.enumerated() {
            padded[[0, index] as [NSNumber]] = NSNumber(value: Float(pixel) / 16)
        }
        let output = try model.prediction(from: MLDictionaryFeatureProvider(dictionary: ["image": padded]))
        let probabilities = try #require(output.featureValue(for: "classLabel_probs")?.dictionaryValue)
        for (label, e) in zip(DigitsDemo.samples.labels, sample.probabilities) {
            let got = try #require(probabilities[label]?.doubleValue)
            #expect(abs(got - e) <= 1e-5 + 1e-4 * abs(e))
        }
    }

    @Test("tensor prediction returns the probabilities as a tensor")
    func tensorPrediction() async throws {
        let model = try MLModel(contentsOf: DigitsDemo.packageURL)
        let sample = DigitsDemo.samples.samples[2]
        let image = MLTensor(shape: [1, 64], scalars: sample.pixels.map { Float($0) / 16 })
        let outputs = try await model.prediction(from: ["image": image])
        let probabilities = try #require(outputs["classLabel_probs"])
        let values = await probabilities.shapedArray(of: Float.self).scalars
        for (g, e) in zip(values, sample.probabilities) { #expect(abs(Double(g) - e) <= 1e-5 + 1e-4 * e) }

        let linear = try MLModel(contentsOf: modelFixture("linear_relu_softmax.mlpackage"))
        let expected = try #require(APIExpected.all["linear_relu_softmax"])
        let x = try #require(expected.inputs["x"])
        let result = try await linear.prediction(from: [
            "x": MLTensor(shape: x.shape, scalars: x.values.map { Float($0) })
        ])
        #expect(result["softmax_0"]?.shape == [1, 16])
    }

    @Test("many tasks predict on one model at once")
    func concurrent() async throws {
        let model = try MLModel(contentsOf: DigitsDemo.packageURL)
        let samples = DigitsDemo.samples.samples
        let labels = try await withThrowingTaskGroup(of: (Int, String).self) { group in
            for round in 0..<4 {
                for index in samples.indices {
                    group.addTask {
                        let output = try await model.prediction(from: DigitsDemo.input(samples[index]))
                        return (index, output.featureValue(for: "classLabel")?.stringValue ?? "")
                    }
                }
                _ = round
            }
            var results: [(Int, String)] = []
            for try await result in group { results.append(result) }
            return results
        }
        #expect(labels.count == 4 * samples.count)
        for (index, label) in labels { #expect(label == samples[index].label) }
    }
}
