import Foundation
import TesseraTensor
import Testing
import _TesseraTestSupport

@testable import TesseraModels

/// Every MIL-builder fixture lowered and run, against outputs NumPy computed.
@Suite("Lowering fixtures")
struct LoweringFixtureTests {
    @Test("each lowered program matches NumPy", arguments: LoweringFixture.supported)
    func matchesNumPy(_ fixture: LoweringFixture) throws {
        let function = try LoweredFunction(package: try fixture.package(), functionName: "main")
        #expect(function.inputs.map(\.name) == fixture.inputs)
        let outputs = try function.run(try fixture.inputTensors())
        MLTensor.materialize(fixture.outputs.compactMap { outputs[$0] })
        for (index, name) in fixture.outputs.enumerated() {
            let expected = try fixture.expected(index)
            let got = try #require(outputs[name], "no output \(name) among \(outputs.keys.sorted())")
            #expect(got.shape == expected.shape, "\(fixture.name) output \(name)")
            let mismatch = firstMismatch(
                got.scalars(of: Float.self), expected.floats, rtol: fixture.rtol, atol: fixture.atol)
            #expect(mismatch == nil, "\(fixture.name) output \(name): \(mismatch ?? "")")
        }
    }

    @Test("every per-op fixture's ops are lowered, and together they cover the ops every model needs")
    func coverage() {
        let lowered = LoweredFunction.supportedOperationTypes.union(["const"])
        let used = Set(LoweringFixture.supported.flatMap(\.ops))
        #expect(used.isSubset(of: lowered), "fixtures use ops Tessera does not lower: \(used.subtracting(lowered))")
        let required: Set<String> = [
            "cast", "conv", "linear", "matmul", "add", "sub", "mul", "real_div", "pow", "maximum", "minimum", "relu",
            "relu6", "clip", "sigmoid", "silu", "tanh", "gelu", "softmax", "layer_norm", "batch_norm", "instance_norm",
            "max_pool", "avg_pool", "reduce_mean", "reduce_sum", "reduce_max", "reduce_min", "reshape", "transpose",
            "expand_dims", "squeeze", "concat", "split", "slice_by_index", "gather", "select", "equal", "not_equal",
            "less", "less_equal", "greater", "greater_equal", "upsample_nearest_neighbor", "pad", "tile", "classify",
        ]
        #expect(required.isSubset(of: used), "no fixture for \(required.subtracting(used).sorted())")
    }

    @Test("a classifier exposes its labels and returns probabilities and the best index")
    func classifier() throws {
        let fixture = try #require(LoweringFixture.named("classifier"))
        let function = try LoweredFunction(package: try fixture.package(), functionName: "main")
        let classifier = try #require(function.classifier)
        #expect(function.classLabels == fixture.labels)
        #expect(classifier.labelOutput == "classLabel")
        #expect(classifier.probabilitiesOutput == "classLabel_probs")
        let outputs = try function.run(try fixture.inputTensors())
        let probabilities = try #require(outputs["classLabel_probs"]).scalars(of: Float.self)
        let index = try #require(outputs["classLabel"])
        #expect(index.shape == [])
        let best = probabilities.indices.max { probabilities[$0] < probabilities[$1] }!
        #expect(index.scalars(of: Int32.self) == [Int32(best)])
    }
}
