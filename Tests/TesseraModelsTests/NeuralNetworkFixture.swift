import Foundation
import TesseraModels
import TesseraMultiArray
import TesseraTensor
import Testing
import _TesseraTestSupport

/// One case written by `tools/make_neuralnetwork_fixtures.py` in
/// `Tests/Fixtures/neuralnetwork/<name>/`: a NeuralNetwork `.mlmodel`, its inputs and the
/// outputs NumPy or PyTorch computed; or, with ``error``, a model that must fail to load.
struct NeuralNetworkFixture: Decodable, Sendable, CustomTestStringConvertible {
    var name: String
    var inputs: [String]
    var outputs: [String]
    var rtol: Double
    var atol: Double
    /// The layer types in the model.
    var layers: [String]
    /// For a bad model: a phrase the load error must contain.
    var error: String?
    /// A classifier's labels, as strings.
    var labels: [String]?
    /// For a random layer: the statistics its output must have (no element-wise reference).
    var distribution: Distribution?

    /// What `tools/neuralnetwork_fixture_cases_spec5.py` says a random layer draws.
    struct Distribution: Decodable, Sendable {
        /// `normal`, `uniform`, `bernoulli` or `categorical`.
        var kind: String
        var shape: [Int]
        /// Whether the layer has a seed (then two predictions agree).
        var seeded: Bool
        var mean: Double?
        var std: Double?
        var low: Double?
        var high: Double?
        var p: Double?
        /// A categorical layer's class probabilities, one row per sampled row.
        var probabilities: [[Double]]?
    }

    var testDescription: String { name }

    /// Every case in `neuralnetwork/cases.json`.
    static let all: [NeuralNetworkFixture] = {
        do {
            let data = try Data(contentsOf: Fixtures.url("neuralnetwork/cases.json"))
            return try JSONDecoder().decode([NeuralNetworkFixture].self, from: data)
        } catch {
            Issue.record("cannot read neuralnetwork/cases.json: \(error)")
            return []
        }
    }()

    /// The cases that must predict.
    static let predicting = all.filter { $0.error == nil && $0.distribution == nil }
    /// The random layers, checked by their statistics.
    static let random = all.filter { $0.distribution != nil }
    /// The cases that must fail to load.
    static let failing = all.filter { $0.error != nil }

    /// The model file.
    var url: URL { Fixtures.url("neuralnetwork/\(name)/model.mlmodel") }

    /// The inputs as a feature provider.
    func provider() throws -> MLDictionaryFeatureProvider {
        var features: [String: MLFeatureValue] = [:]
        for input in inputs {
            let array = try Fixtures.npy("neuralnetwork/\(name)/\(input).npy")
            features[input] = MLFeatureValue(
                multiArray: MLMultiArray(MLShapedArray<Float>(scalars: array.floats, shape: array.shape)))
        }
        return try MLDictionaryFeatureProvider(dictionary: features)
    }

    /// The expected value of output `output`.
    func expected(_ output: String) throws -> NumPyArray {
        try Fixtures.npy("neuralnetwork/\(name)/expected_\(output).npy")
    }

    /// Records an issue for every element where `got` and `expected` differ by more than
    /// `atol + rtol · |expected|`, and for a shape that differs beyond leading 1s (the
    /// rank-5 `[Seq, Batch]` axes a legacy network's blobs carry).
    func expectClose(_ got: [Float], shape: [Int], _ expected: NumPyArray, output: String) {
        let dropOnes = { (s: [Int]) in Array(s.drop { $0 == 1 }) }
        #expect(dropOnes(shape) == dropOnes(expected.shape), "\(name).\(output): shape \(shape) vs \(expected.shape)")
        let reference = expected.floats
        guard got.count == reference.count else {
            Issue.record("\(name).\(output): \(got.count) values, expected \(reference.count)")
            return
        }
        var worst = 0.0
        var bad = 0
        for (a, b) in zip(got, reference) {
            let error = Swift.abs(Double(a) - Double(b))
            if !(error <= atol + rtol * Swift.abs(Double(b))) {
                bad += 1
                worst = Swift.max(worst, error)
            }
        }
        #expect(bad == 0, "\(name).\(output): \(bad) of \(got.count) values off (worst \(worst))")
    }
}
