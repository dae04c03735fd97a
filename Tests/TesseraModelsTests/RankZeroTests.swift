import Foundation
import TesseraMultiArray
import TesseraTensor
import Testing
import _TesseraTestSupport

@testable import TesseraModels

/// One case of `Tests/Fixtures/rank0/cases.json` (`tools/make_rank0_fixtures.py`): a MIL-builder
/// program or a converted PyTorch module, its inputs, and the outputs NumPy or PyTorch computed,
/// stored in the shape coremltools' tests check Core ML's result against (rank 0 as `[1]`).
struct RankZeroFixture: Decodable, Sendable, CustomTestStringConvertible {
    var name: String
    /// `mil`, `state` or `torch`.
    var kind: String
    var inputs: [String]
    var outputs: [String]
    var inputShapes: [String: [Int]]
    var expectedShapes: [[Int]]
    var rtol: Double
    var atol: Double
    var ops: [String]

    var testDescription: String { name }

    static let all: [RankZeroFixture] = {
        do {
            let data = try Data(contentsOf: Fixtures.url("rank0/cases.json"))
            return try JSONDecoder().decode([RankZeroFixture].self, from: data)
        } catch {
            Issue.record("cannot read rank0/cases.json: \(error)")
            return []
        }
    }()

    static let stateless = all.filter { $0.kind != "state" }

    static func named(_ name: String) throws -> RankZeroFixture {
        try #require(all.first { $0.name == name })
    }

    var modelURL: URL { Fixtures.url("rank0/\(name)/model.mlpackage") }

    /// The input `.npy` file as a multi-array of its own data type.
    func multiArray(_ input: String) throws -> MLMultiArray {
        let array = try Fixtures.npy("rank0/\(name)/\(input).npy")
        switch array.dtype {
        case "<i4":
            return try MLMultiArray(MLShapedArray<Int32>(scalars: array.ints.map { Int32($0) }, shape: array.shape))
        case "<f2":
            return MLMultiArray(MLShapedArray<Float16>(scalars: array.floats.map { Float16($0) }, shape: array.shape))
        default: return MLMultiArray(MLShapedArray<Float>(scalars: array.floats, shape: array.shape))
        }
    }

    func provider() throws -> MLDictionaryFeatureProvider {
        var features: [String: MLFeatureValue] = [:]
        for input in inputs { features[input] = MLFeatureValue(multiArray: try multiArray(input)) }
        return MLDictionaryFeatureProvider(features: features)
    }

    func expected(_ index: Int) throws -> NumPyArray { try Fixtures.npy("rank0/\(name)/expected_\(index).npy") }

    /// Checks an output as coremltools' tests do: the shape first, then the values.
    func check(_ output: MLMultiArray, index: Int) throws {
        let expected = try expected(index)
        #expect(output.shape.map(\.intValue) == expected.shape, "\(name) output \(outputs[index]): shape")
        #expect(expected.shape == expectedShapes[index])
        let got = MLShapedArray<Double>(converting: output).scalars
        let mismatch = firstMismatch(got, expected.doubles, rtol: rtol, atol: atol)
        #expect(mismatch == nil, "\(name) output \(outputs[index]): \(mismatch ?? "")")
    }
}

/// Core ML's rank-0 rules (Docs/Bridging.md, "Rank-0 values"), against values NumPy and
/// PyTorch computed: scalar outputs come back as `[1]`, rank-0 inputs are given as `[1]`, a
/// rank-0 state is a `[1]` buffer, and the ops whose MIL definition promotes rank-0 operands
/// (concat, stack, gather indices, reshape targets, reductions) take them.
@Suite("Rank-0 values")
struct RankZeroTests {
    @Test("every rank-0 fixture runs through MLModel with Core ML's shapes", arguments: RankZeroFixture.stateless)
    func fixtureRuns(_ fixture: RankZeroFixture) throws {
        let model = try MLModel(contentsOf: fixture.modelURL)
        let output = try model.prediction(from: try fixture.provider())
        for (index, name) in fixture.outputs.enumerated() {
            let array = try #require(output.featureValue(for: name)?.multiArrayValue, "\(fixture.name): \(name)")
            try fixture.check(array, index: index)
        }
    }

    @Test("the tensor prediction gives a scalar output as [1] too")
    func tensorPredictionScalarOutput() async throws {
        let fixture = try RankZeroFixture.named("output_scalar")
        let model = try MLModel(contentsOf: fixture.modelURL)
        let x = try Fixtures.npy("rank0/output_scalar/x.npy")
        let outputs = try await model.prediction(from: ["x": MLTensor(shape: x.shape, scalars: x.floats)])
        let total = try #require(outputs["total"])
        #expect(total.shape == [1])
        let expected = try fixture.expected(0).floats
        #expect(firstMismatch(await total.shapedArray(of: Float.self).scalars, expected, rtol: 1e-5, atol: 1e-5) == nil)
    }

    @Test("a scalar output's description declares no shape (coremltools writes none); the value is [1]")
    func scalarOutputDescription() throws {
        let model = try MLModel(contentsOf: try RankZeroFixture.named("torch_scalar_output").modelURL)
        let description = try #require(model.modelDescription.outputDescriptionsByName.values.first)
        #expect(description.multiArrayConstraint?.shape.isEmpty == true)
    }

    @Test("a rank-0 program input is described as [1]; a 0-d value is taken for it as well")
    func scalarInputShapes() throws {
        let fixture = try RankZeroFixture.named("input_scalar")
        let model = try MLModel(contentsOf: fixture.modelURL)
        #expect(model.modelDescription.inputDescriptionsByName["s"]?.multiArrayConstraint?.shape == [1])
        let v = try fixture.multiArray("v")
        let scalar = MLMultiArray(MLShapedArray<Float>(scalars: [1.5], shape: []))
        let output = try model.prediction(
            from: MLDictionaryFeatureProvider(features: [
                "s": MLFeatureValue(multiArray: scalar), "v": .init(multiArray: v),
            ]))
        try fixture.check(try #require(output.featureValue(for: "y")?.multiArrayValue), index: 0)
        // Two elements are not a scalar.
        let pair = MLMultiArray(MLShapedArray<Float>(scalars: [1.5, 2], shape: [2]))
        expectModelError(.featureType, containing: ["\"s\"", "[2]"]) {
            _ = try model.prediction(
                from: MLDictionaryFeatureProvider(features: ["s": .init(multiArray: pair), "v": .init(multiArray: v)]))
        }
    }

    @Test("a 0-d value is taken for an input declared [1]")
    func scalarForOneElementInput() throws {
        let fixture = try RankZeroFixture.named("gather_scalar_index")
        let model = try MLModel(contentsOf: fixture.modelURL)
        let index = MLMultiArray(MLShapedArray<Int32>(scalars: [2], shape: []))
        let output = try model.prediction(
            from: MLDictionaryFeatureProvider(features: [
                "t": .init(multiArray: try fixture.multiArray("t")), "i": .init(multiArray: index),
            ]))
        try fixture.check(try #require(output.featureValue(for: "row")?.multiArrayValue), index: 0)
    }

    @Test("a rank-0 state is a [1] buffer that the program reads and writes as rank 0")
    func scalarState() throws {
        let fixture = try RankZeroFixture.named("state_scalar")
        let model = try MLModel(contentsOf: fixture.modelURL)
        #expect(model.modelDescription.stateDescriptionsByName["counter"]?.stateConstraint?.bufferShape == [1])
        let state = model.makeState()
        #expect(state.withMultiArray(for: "counter") { $0.shape.map(\.intValue) } == [1])
        let x = try fixture.multiArray("x")
        let sum = MLShapedArray<Float>(converting: x).scalars.reduce(0, +)
        for step in 1...3 {
            let output = try model.prediction(
                from: MLDictionaryFeatureProvider(features: ["x": .init(multiArray: x)]), using: state)
            let y = try #require(output.featureValue(for: "y")?.multiArrayValue)
            #expect(y.shape == [1])
            #expect(abs(MLShapedArray<Float>(converting: y).scalars[0] - sum * Float(step)) < 1e-2)
        }
        // The first step's value is the fixture's (float16 arithmetic, NumPy).
        let counter = state.withMultiArray(for: "counter") { MLShapedArray<Float>(converting: $0) }
        #expect(counter.shape == [1])
        #expect(abs(counter.scalars[0] - 3 * (try fixture.expected(0).floats[0])) < 1e-2)
    }

    @Test("the converted einsums build their reshape targets from rank-0 values")
    func einsumProgramsConcatenateScalars() throws {
        for name in ["torch_einsum_flexible", "torch_einsum_batch_flexible"] {
            let fixture = try RankZeroFixture.named(name)
            #expect(fixture.ops.contains("concat") && fixture.ops.contains("slice_by_index"), "\(name): \(fixture.ops)")
        }
    }

    @Test("the converted einsums run on every shape their flexible inputs allow")
    func einsumOtherShapes() throws {
        let fixture = try RankZeroFixture.named("torch_einsum_flexible")  // abc,cd->bda
        let model = try MLModel(contentsOf: fixture.modelURL)
        let (a, b, c, d) = (1, 3, 2, 5)
        let x = (0..<(a * b * c)).map { Float($0) / 7 }
        let y = (0..<(c * d)).map { Float($0 % 5) - 2 }
        let output = try model.prediction(
            from: MLDictionaryFeatureProvider(features: [
                "x": .init(multiArray: MLMultiArray(MLShapedArray(scalars: x, shape: [a, b, c]))),
                "y": .init(multiArray: MLMultiArray(MLShapedArray(scalars: y, shape: [c, d]))),
            ]))
        let result = try #require(output.featureValue(for: fixture.outputs[0])?.multiArrayValue)
        #expect(result.shape.map(\.intValue) == [b, d, a])
        // out[j, l, i] = Σ_k x[i, j, k] · y[k, l], by loops.
        var expected: [Float] = []
        for j in 0..<b {
            for l in 0..<d {
                for i in 0..<a {
                    expected.append((0..<c).reduce(0) { $0 + x[(i * b + j) * c + $1] * y[$1 * d + l] })
                }
            }
        }
        #expect(
            firstMismatch(MLShapedArray<Float>(converting: result).scalars, expected, rtol: 1e-5, atol: 1e-5) == nil)
    }

    @Test("a program that fails on its own declared shapes is refused at load, naming the op")
    func loadCheckNamesTheOperation() {
        expectModelError(.generic, containing: ["model.mlpackage", "y [4, 5]", "'product'", "'matmul'"]) {
            _ = try MLModel(contentsOf: Fixtures.url("rank0/invalid_matmul_declared_shapes/model.mlpackage"))
        }
    }

    @Test("shapes that follow input values are left to the prediction; shapes from shapes are checked at load")
    func valueDependentShapes() throws {
        func lowered(_ name: String) throws -> LoweredFunction {
            try LoweredFunction(
                package: CoreMLPackage(contentsOf: try RankZeroFixture.named(name).modelURL), functionName: "main")
        }
        #expect(try lowered("reshape_target_from_input").shapesDependOnInputValues)
        #expect(try !lowered("torch_einsum_flexible").shapesDependOnInputValues)
        #expect(try !lowered("reshape_target_from_scalars").shapesDependOnInputValues)
        // Ones as the target would not fit six elements: the check must not run on it.
        #expect(throws: LoweringError.self) {
            try lowered("reshape_target_from_input").checkBuilds(inputShapes: ["f": [6], "s": [2]])
        }
    }
}
