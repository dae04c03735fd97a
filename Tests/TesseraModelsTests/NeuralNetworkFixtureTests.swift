import Foundation
import TesseraModels
import TesseraMultiArray
import TesseraTensor
import Testing
import _TesseraTestSupport

/// NeuralNetwork models from `tools/make_neuralnetwork_fixtures.py` through `MLModel`: one
/// NeuralNetworkBuilder model per layer type with NumPy / PyTorch outputs, the weight formats
/// (float16, linear and lookup-table quantization of 3–8 bits), classifiers, preprocessing,
/// and torch models converted with `convert_to="neuralnetwork"`.
@Suite("NeuralNetwork fixtures")
struct NeuralNetworkFixtureTests {
    @Test("predicts the reference outputs", arguments: NeuralNetworkFixture.predicting)
    func predicts(_ fixture: NeuralNetworkFixture) throws {
        let model = try MLModel(contentsOf: fixture.url)
        let output = try model.prediction(from: try fixture.provider())
        if let labels = fixture.labels {
            let name = try #require(model.modelDescription.predictedProbabilitiesName)
            let probabilities = try #require(output.featureValue(for: name)?.dictionaryValue)
            let expected = try fixture.expected(name).floats
            let got = labels.map { label in
                Float(
                    truncating: probabilities[label] ?? probabilities[Int64(label) ?? -1] ?? NSNumber(value: Double.nan)
                )
            }
            fixture.expectClose(got, shape: [got.count], try fixture.expected(name), output: name)
            let best = expected.indices.max { expected[$0] < expected[$1] }!
            let label = output.featureValue(for: model.modelDescription.predictedFeatureName ?? "")
            #expect(label?.stringValue == labels[best] || label?.int64Value == Int64(labels[best]))
            return
        }
        for name in fixture.outputs {
            let array = try #require(
                output.featureValue(for: name)?.multiArrayValue, "\(fixture.name): no output \(name)")
            let (scalars, shape) =
                array.dataType == .double
                ? (MLShapedArray<Double>(array).scalars.map { Float($0) }, array.shape.map(\.intValue))
                : (MLShapedArray<Float>(array).scalars, array.shape.map(\.intValue))
            fixture.expectClose(scalars, shape: shape, try fixture.expected(name), output: name)
        }
    }

    @Test("bad models fail the load with a message naming the problem", arguments: NeuralNetworkFixture.failing)
    func failsToLoad(_ fixture: NeuralNetworkFixture) {
        do {
            _ = try MLModel(contentsOf: fixture.url)
            Issue.record("\(fixture.name) loaded")
        } catch let error as MLModelError {
            let message = "\(error)"
            #expect(message.contains(fixture.error!), "\(message)")
            #expect(message.contains("model.mlmodel"), "the message names the model: \(message)")
        } catch {
            Issue.record("\(fixture.name): not an MLModelError: \(error)")
        }
    }

    @Test("a NeuralNetwork as the root model of an .mlpackage predicts as the .mlmodel does")
    func package() throws {
        let fixture = try #require(NeuralNetworkFixture.all.first { $0.name == "conv_valid" })
        let url = fixture.url.deletingLastPathComponent().appendingPathComponent("model.mlpackage")
        let output = try MLModel(contentsOf: url).prediction(from: try fixture.provider())
        let array = try #require(output.featureValue(for: "y")?.multiArrayValue)
        let scalars =
            array.dataType == .double
            ? MLShapedArray<Double>(array).scalars.map { Float($0) } : MLShapedArray<Float>(array).scalars
        fixture.expectClose(scalars, shape: array.shape.map(\.intValue), try fixture.expected("y"), output: "y")
    }

    @Test("a truncated layer list throws at load, never traps")
    func truncatedFile() throws {
        let data = try Data(contentsOf: try #require(NeuralNetworkFixture.all.first { $0.name == "conv_valid" }).url)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("nn-truncated-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        for fraction in [0.3, 0.6, 0.9, 0.99] {
            let url = directory.appendingPathComponent("cut.mlmodel")
            try data.prefix(Int(Double(data.count) * fraction)).write(to: url)
            #expect(throws: MLModelError.self) { _ = try MLModel(contentsOf: url) }
        }
    }

    @Test("a classifier's description lists its labels")
    func classifierDescription() throws {
        let fixture = try #require(NeuralNetworkFixture.all.first { $0.name == "classifier_string_labels" })
        let model = try MLModel(contentsOf: fixture.url)
        #expect(model.modelDescription.classLabels as? [String] == ["cat", "dog", "bird"])
        #expect(model.modelDescription.predictedFeatureName == "label")
    }

    @Test("a compute plan weighs every layer; the weights sum to 1 and the first convolution leads")
    func computePlanCosts() async throws {
        let fixture = try #require(NeuralNetworkFixture.all.first { $0.name == "torch_small_cnn" })
        let plan = try await MLComputePlan.load(contentsOf: fixture.url, configuration: MLModelConfiguration())
        guard case .neuralNetwork(let network) = plan.modelStructure else {
            Issue.record("not a neural-network structure")
            return
        }
        let weights = network.layers.map { plan.estimatedCost(of: $0)?.weight ?? -1 }
        #expect(weights.allSatisfy { $0 >= 0 })
        #expect(Swift.abs(weights.reduce(0, +) - 1) < 1e-9)
        #expect(network.layers[weights.indices.max { weights[$0] < weights[$1] }!].type == "convolution")
    }
}
