import Foundation
import TesseraModels
import TesseraMultiArray
import TesseraTensor
import Testing
import _TesseraTestSupport

/// The NeuralNetwork `resizeBilinear` and `cropResize` layers against the cases
/// `tools/make_neuralnetwork_resizing_fixtures.py` writes in
/// `Tests/Fixtures/neuralnetwork-resizing/` (PyTorch `grid_sample` values at the grids of
/// `NeuralNetwork.proto`'s sampling modes).
@Suite("NeuralNetwork resizeBilinear and cropResize")
struct NeuralNetworkResizingTests {
    /// One case of `neuralnetwork-resizing/cases.json`.
    struct Case: Decodable, Sendable, CustomTestStringConvertible {
        var name: String
        var inputs: [String]
        var outputs: [String]
        var rtol: Double
        var atol: Double
        var layers: [String]
        /// For a model that must fail to load: a phrase its error contains.
        var error: String?

        var testDescription: String { name }
    }

    static let cases: [Case] = {
        do {
            let data = try Data(contentsOf: Fixtures.url("neuralnetwork-resizing/cases.json"))
            return try JSONDecoder().decode([Case].self, from: data)
        } catch {
            Issue.record("cannot read neuralnetwork-resizing/cases.json: \(error)")
            return []
        }
    }()

    /// The cases that must fail to load.
    static let refused = cases.filter { $0.error != nil }

    @Test("the fixtures cover both layers and every sampling mode")
    func coverage() {
        let names = Self.cases.map(\.name)
        for mode in ["strict_align_endpoints", "align_endpoints", "upsample", "roi_align"] {
            #expect(names.contains { $0.hasPrefix("resize_bilinear_\(mode)_mode") }, "no resizeBilinear \(mode)")
        }
        for mode in ["strict_align_endpoints", "align_endpoints"] {
            #expect(names.contains { $0.contains("_\(mode)_mode_") && $0.hasPrefix("crop_resize") })
        }
        #expect(Set(Self.cases.flatMap(\.layers)) == ["resizeBilinear", "cropResize"])
    }

    @Test("predicts PyTorch's values", arguments: cases.filter { $0.error == nil })
    func predicts(_ fixture: Case) throws {
        let folder = "neuralnetwork-resizing/\(fixture.name)"
        let model = try MLModel(contentsOf: Fixtures.url("\(folder)/model.mlmodel"))
        var features: [String: MLFeatureValue] = [:]
        for input in fixture.inputs {
            let array = try Fixtures.npy("\(folder)/\(input).npy")
            features[input] = MLFeatureValue(
                multiArray: MLMultiArray(MLShapedArray<Float>(scalars: array.floats, shape: array.shape)))
        }
        let output = try model.prediction(from: try MLDictionaryFeatureProvider(dictionary: features))
        for name in fixture.outputs {
            let expected = try Fixtures.npy("\(folder)/expected_\(name).npy")
            let array = try #require(output.featureValue(for: name)?.multiArrayValue, "no output \(name)")
            // A NeuralNetwork's outputs are Double multi-arrays unless the description says otherwise.
            let scalars =
                array.dataType == .double
                ? MLShapedArray<Double>(array).scalars.map { Float($0) } : MLShapedArray<Float>(array).scalars
            let shape = array.shape.map(\.intValue)
            #expect(shape == expected.shape, "\(fixture.name): shape \(shape) vs \(expected.shape)")
            let reference = expected.floats
            try #require(scalars.count == reference.count)
            let bad = zip(scalars, reference).filter { a, b in
                !(Swift.abs(Double(a) - Double(b)) <= fixture.atol + fixture.rtol * Swift.abs(Double(b)))
            }
            #expect(bad.isEmpty, "\(fixture.name): \(bad.count) of \(reference.count) differ, first \(bad.first!)")
        }
    }

    @Test("a crop in a sampling mode without a meaning for boxes fails the load", arguments: refused)
    func refusesCropMode(_ fixture: Case) throws {
        let url = Fixtures.url("neuralnetwork-resizing/\(fixture.name)/model.mlmodel")
        let error = try #require(throws: MLModelError.self) { try MLModel(contentsOf: url) }
        #expect("\(error)".contains(try #require(fixture.error)), "\(error)")
    }
}
