import Foundation
import TesseraKernels
import TesseraTensor
import Testing
import _TesseraTestSupport

@testable import TesseraModels

/// Weights prepared at load: a loaded model's convolutions and linear layers find their
/// weights' packed forms made (``PreparedWeights``), so the first prediction packs nothing, and
/// its outputs are still NumPy's.
@Suite("Weight preparation at load")
struct WeightPreparationTests {
    /// Fixtures whose weights take a packed kernel — convolutions (`batch_cnn`) and linear
    /// layers (`batch_mlp`, `linear_relu_softmax`) — each with a NumPy reference case.
    static let names = ["batch_cnn", "batch_mlp", "linear_relu_softmax"]

    /// Fixture `index` of ``names`` and its reference case.
    static func fixture(_ index: Int) throws -> (String, APIExpected.Case) {
        let name = names[index]
        let reference = name == "linear_relu_softmax" ? APIExpected.all[name] : BatchExpected.all[name]?.first
        return (name, try #require(reference))
    }

    /// Whether this CPU runs the packed kernels, so that weights get packed forms at all.
    static var packs: Bool { PackedGEMM.isPreferred || PackedGEMM.rightPackedIsPreferred }

    @Test("a loaded model's first prediction packs no weight, and matches NumPy", arguments: 0..<3)
    func firstPredictionPacksNothing(_ index: Int) async throws {
        let (name, expected) = try Self.fixture(index)
        let model = try MLModel(contentsOf: modelFixture("\(name).mlpackage"))
        let (output, misses) = try await PreparedWeights.countingMisses {
            try await model.prediction(from: try expected.provider())
        }
        #expect(misses == 0, "\(name): the first prediction packed \(misses) weights")
        for (outputName, want) in expected.outputs {
            let array = try #require(output.featureValue(for: outputName)?.multiArrayValue, "\(outputName)")
            #expect(array.shape.map(\.intValue) == want.shape)
            let got = MLShapedArray<Float>(converting: array).scalars
            #expect(got.count == want.values.count)
            for (g, e) in zip(got, want.values) where abs(Double(g) - e) > 1e-5 + 1e-4 * abs(e) {
                Issue.record("\(name) \(outputName): \(g) vs NumPy \(e)")
                break
            }
        }
    }

    @Test("the same program lowered without a model's load preparation packs on its first run", arguments: 0..<3)
    func unpreparedRunPacks(_ index: Int) async throws {
        guard Self.packs else { return }
        let (name, expected) = try Self.fixture(index)
        let package = try CoreMLPackage(contentsOf: modelFixture("\(name).mlpackage"))
        let function = try LoweredFunction(package: package, functionName: "main")
        let inputs = expected.inputs.mapValues {
            MLTensor(MLShapedArray<Float>(scalars: $0.values.map { Float($0) }, shape: $0.shape))
        }
        let (_, misses) = try await PreparedWeights.countingMisses {
            let outputs = try function.run(inputs)
            await MLTensor.materialize(Array(outputs.values))
        }
        #expect(misses > 0, "\(name): the counter saw no packing")
    }

    @Test("prepare readies a graph's constant weights without computing it")
    func prepareComputesNothing() async throws {
        let (name, expected) = try Self.fixture(0)
        let package = try CoreMLPackage(contentsOf: modelFixture("\(name).mlpackage"))
        let function = try LoweredFunction(package: package, functionName: "main")
        let inputs = expected.inputs.mapValues {
            MLTensor(MLShapedArray<Float>(scalars: $0.values.map { Float($0) }, shape: $0.shape))
        }
        let outputs = try function.run(inputs)
        let prepared = MLTensor.prepare(Array(outputs.values))
        #expect(prepared > 0)
        #expect(outputs.values.allSatisfy { !$0.isMaterialized })
        let (_, misses) = await PreparedWeights.countingMisses {
            await MLTensor.materialize(Array(outputs.values))
        }
        #expect(misses == 0)
    }
}
