import Foundation
import TesseraModels
import TesseraMultiArray
import TesseraTensor
import Testing
import _TesseraTestSupport

/// Items and NumPy outputs written by `tools/make_model_fixtures.py` for the batch fixtures.
enum BatchExpected {
    static let all: [String: [APIExpected.Case]] = {
        do {
            let data = try Data(contentsOf: Fixtures.url("models/batch_expected.json"))
            return try JSONDecoder().decode([String: [APIExpected.Case]].self, from: data)
        } catch {
            fatalError("[BatchExpected] cannot read models/batch_expected.json: \(error)")
        }
    }()

    /// The cases of `model` at `indices`.
    static func cases(_ model: String, _ indices: [Int]) throws -> [APIExpected.Case] {
        let cases = try #require(all[model])
        return indices.map { cases[$0] }
    }
}

/// `predictions(fromBatch:)`: one execution when the model keeps items apart along axis 0, a
/// loop otherwise, and the same results either way.
@Suite("Batch predictions")
struct BatchPredictionTests {
    /// Deterministic pseudo-random floats in [-2, 2) (a 64-bit LCG), so every item differs.
    struct Values {
        var state: UInt64

        mutating func next(_ count: Int) -> [Float] {
            (0..<count).map { _ in
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                return Float(Int64(bitPattern: state >> 11) % 4_000_000) / 1_000_000
            }
        }
    }

    /// `count` items of the fixture's inputs, each input's dimension 0 being `rows`.
    static func items(model: String, count: Int, rows: Int, seed: UInt64) throws -> [MLDictionaryFeatureProvider] {
        let shapes: [String: [Int]] =
            switch model {
            case "batch_mlp": ["x": [rows, 8], "z": [rows, 4]]
            case "batch_cnn": ["image": [rows, 3, 8, 8]]
            case "batch_attention": ["x": [rows, 4, 8]]
            default: ["x": [rows, 8]]
            }
        var values = Values(state: seed)
        return try (0..<count).map { _ in
            var features: [String: MLFeatureValue] = [:]
            for (name, shape) in shapes.sorted(by: { $0.key < $1.key }) {
                let scalars = values.next(shape.reduce(1, *))
                features[name] = MLFeatureValue(multiArray: MLMultiArray(MLShapedArray(scalars: scalars, shape: shape)))
            }
            return try MLDictionaryFeatureProvider(dictionary: features)
        }
    }

    /// An output's shape and scalars.
    static func output(_ provider: any MLFeatureProvider, _ name: String) throws -> (shape: [Int], scalars: [Float]) {
        let array = try #require(provider.featureValue(for: name)?.multiArrayValue, "output \(name)")
        return (array.shape.map(\.intValue), MLShapedArray<Float>(array).scalars)
    }

    /// Expects the batch's outputs to equal single predictions of the same items within a
    /// relative tolerance of 1e-5 of each value plus 1e-5 of the output's largest magnitude:
    /// the batched GEMM may block its sums differently when it has more rows, so the last bits
    /// differ, and an output that is a small difference of large terms (attention's
    /// `softmax · v`) keeps the terms' absolute error. Items mixed up give errors of order 1.
    static func expectMatchesSingles(
        _ model: MLModel, _ items: [MLDictionaryFeatureProvider], sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let outputs = try model.predictions(fromBatch: MLArrayBatchProvider(array: items))
        #expect(outputs.count == items.count, sourceLocation: sourceLocation)
        for (index, item) in items.enumerated() {
            let single = try model.prediction(from: item)
            for name in model.modelDescription.outputDescriptionsByName.keys {
                let got = try output(outputs.features(at: index), name)
                let expected = try output(single, name)
                #expect(got.shape == expected.shape, "item \(index) \(name)", sourceLocation: sourceLocation)
                #expect(got.scalars.count == expected.scalars.count, sourceLocation: sourceLocation)
                let scale = expected.scalars.map(abs).max() ?? 0
                for (g, e) in zip(got.scalars, expected.scalars) where abs(g - e) > 1e-5 * (abs(e) + scale) {
                    Issue.record("item \(index) \(name): \(g) vs \(e) alone", sourceLocation: sourceLocation)
                    break
                }
            }
        }
    }

    /// Expects the batch's outputs to match NumPy (rtol 1e-4).
    static func expectMatchesNumPy(
        _ model: MLModel, _ cases: [APIExpected.Case], sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let outputs = try model.predictions(fromBatch: MLArrayBatchProvider(array: try cases.map { try $0.provider() }))
        for (index, reference) in cases.enumerated() {
            for (name, expected) in reference.outputs {
                let got = try output(outputs.features(at: index), name)
                #expect(got.shape == expected.shape, "item \(index) \(name)", sourceLocation: sourceLocation)
                #expect(got.scalars.count == expected.values.count, sourceLocation: sourceLocation)
                for (g, e) in zip(got.scalars, expected.values) where abs(Double(g) - e) > 1e-5 + 1e-4 * abs(e) {
                    Issue.record("item \(index) \(name): \(g) vs NumPy \(e)", sourceLocation: sourceLocation)
                    break
                }
            }
        }
    }

    @Test(
        "a batch-flexible model runs a batch as one execution, equal to single predictions",
        arguments: ["batch_mlp", "batch_cnn", "batch_attention"], [1, 2, 8])
    func batchedEqualsSingles(_ name: String, _ count: Int) throws {
        let model = try MLModel(contentsOf: modelFixture("\(name).mlpackage"))
        for rows in [1, 2] {
            let before = model.batchedExecutionCount
            try Self.expectMatchesSingles(
                model, try Self.items(model: name, count: count, rows: rows, seed: UInt64(count * 10 + rows)))
            // A batch of one is a single prediction; two or more must have run batched.
            #expect(model.batchedExecutionCount == before + (count >= 2 ? 1 : 0), "rows \(rows)")
        }
    }

    @Test("batched outputs match NumPy; items of different shapes run as a loop")
    func numPyReferences() throws {
        let model = try MLModel(contentsOf: modelFixture("batch_mlp.mlpackage"))
        try Self.expectMatchesNumPy(model, try BatchExpected.cases("batch_mlp", [0, 1]))
        #expect(model.batchedExecutionCount == 1)
        // Items 0 and 2 differ in dimension 0 (1 and 3 rows): a loop, same references.
        try Self.expectMatchesNumPy(model, try BatchExpected.cases("batch_mlp", [0, 2, 1]))
        #expect(model.batchedExecutionCount == 1)

        let cnn = try MLModel(contentsOf: modelFixture("batch_cnn.mlpackage"))
        try Self.expectMatchesNumPy(cnn, try BatchExpected.cases("batch_cnn", [1, 1, 1]))
        #expect(cnn.batchedExecutionCount == 1)

        // Heads, transposes that move the batch axis, slices and a gather on axis 0, matmuls.
        let attention = try MLModel(contentsOf: modelFixture("batch_attention.mlpackage"))
        try Self.expectMatchesNumPy(attention, try BatchExpected.cases("batch_attention", [0, 1, 2]))
        #expect(attention.batchedExecutionCount == 1)
    }

    @Test("a model that mixes items across dimension 0 runs a batch as a loop, with correct results")
    func mixingModelLoops() throws {
        let model = try MLModel(contentsOf: modelFixture("batch_mixing.mlpackage"))
        // Items 0 and 2 have the same shape, so only the program's batch rules can refuse.
        try Self.expectMatchesNumPy(model, try BatchExpected.cases("batch_mixing", [0, 2]))
        try Self.expectMatchesNumPy(model, try BatchExpected.cases("batch_mixing", [0, 1, 2]))
        try Self.expectMatchesSingles(model, try Self.items(model: "batch_mixing", count: 4, rows: 3, seed: 5))
        // The verdict is cached: asking again still loops.
        try Self.expectMatchesNumPy(model, try BatchExpected.cases("batch_mixing", [2, 0]))
        #expect(model.batchedExecutionCount == 0)
    }

    @Test("a reshape to a constant leading size regroups an item's elements, so its batch runs as a loop")
    func regroupingReshapeLoops() throws {
        // Alone, [2, 8] → [4, 4] → softmax over axis 0 → [2, 8]; stacked, [4, 8] → [4, 8], where
        // the batch looks like axis 1 and a softmax over axis 0 would mix the two items.
        let model = try MLModel(contentsOf: modelFixture("batch_regroup.mlpackage"))
        try Self.expectMatchesNumPy(model, try BatchExpected.cases("batch_regroup", [0, 1]))
        try Self.expectMatchesSingles(model, try Self.items(model: "batch_regroup", count: 3, rows: 2, seed: 11))
        #expect(model.batchedExecutionCount == 0)
    }

    @Test("an enumerated batch dimension runs as one execution only when the stacked shape is listed")
    func enumeratedShapes() throws {
        let model = try MLModel(contentsOf: modelFixture("batch_enumerated.mlpackage"))
        try Self.expectMatchesNumPy(model, try BatchExpected.cases("batch_enumerated", [0, 1]))  // [2, 8]: listed
        #expect(model.batchedExecutionCount == 1)
        try Self.expectMatchesNumPy(model, try BatchExpected.cases("batch_enumerated", [0, 1, 2]))  // [3, 8]: not
        #expect(model.batchedExecutionCount == 1)
        try Self.expectMatchesNumPy(model, try BatchExpected.cases("batch_enumerated", [3, 3, 3, 3]))  // [8, 8]
        #expect(model.batchedExecutionCount == 2)
    }

    @Test("a fixed-shape model runs a batch as a loop")
    func fixedShapeLoops() throws {
        let model = try MLModel(contentsOf: modelFixture("linear_relu_softmax.mlpackage"))
        let expected = try #require(APIExpected.all["linear_relu_softmax"])
        try Self.expectMatchesNumPy(model, [expected, expected, expected])
        #expect(model.batchedExecutionCount == 0)
    }

    @Test("an item of a shape the model does not accept throws with its index before anything runs")
    func badItemNamesIndex() throws {
        let model = try MLModel(contentsOf: modelFixture("batch_mlp.mlpackage"))
        var items = try Self.items(model: "batch_mlp", count: 3, rows: 2, seed: 9)
        items[2] = try MLDictionaryFeatureProvider(dictionary: [
            "x": MLFeatureValue(multiArray: MLMultiArray(MLShapedArray<Float>(repeating: 0, shape: [2, 7]))),
            "z": MLFeatureValue(multiArray: MLMultiArray(MLShapedArray<Float>(repeating: 0, shape: [2, 4]))),
        ])
        expectModelError(.featureType, containing: ["batch input 2:", "\"x\""]) {
            _ = try model.predictions(fromBatch: MLArrayBatchProvider(array: items))
        }
        // A size beyond the range (65 > 64) in item 1.
        items[1] = try Self.items(model: "batch_mlp", count: 1, rows: 65, seed: 3)[0]
        expectModelError(.featureType, containing: ["batch input 1:", "dimension 0"]) {
            _ = try model.predictions(fromBatch: MLArrayBatchProvider(array: items))
        }
        #expect(model.batchedExecutionCount == 0)
    }

    @Test("items whose inputs the program cannot combine fail with the first item's index, as a loop would")
    func programErrorNamesIndex() throws {
        // x with 2 rows and z with 3: each allowed by the description, but the program's add
        // cannot broadcast [2, 4] with [3, 4]; the batched graph fails too, and the loop reports it.
        let model = try MLModel(contentsOf: modelFixture("batch_mlp.mlpackage"))
        let item = try MLDictionaryFeatureProvider(dictionary: [
            "x": MLFeatureValue(multiArray: MLMultiArray(MLShapedArray<Float>(repeating: 1, shape: [2, 8]))),
            "z": MLFeatureValue(multiArray: MLMultiArray(MLShapedArray<Float>(repeating: 1, shape: [3, 4]))),
        ])
        expectModelError(.generic, containing: ["batch input 0:"]) {
            _ = try model.predictions(fromBatch: MLArrayBatchProvider(array: [item, item]))
        }
        #expect(model.batchedExecutionCount == 0)
    }

    @Test("concurrent batches on one model agree with single predictions")
    func concurrentBatches() async throws {
        let model = try MLModel(contentsOf: modelFixture("batch_mlp.mlpackage"))
        try await withThrowingTaskGroup(of: Void.self) { group in
            for seed in 1...4 {
                group.addTask {
                    try Self.expectMatchesSingles(
                        model, try Self.items(model: "batch_mlp", count: 4, rows: 2, seed: UInt64(seed)))
                }
            }
            try await group.waitForAll()
        }
        #expect(model.batchedExecutionCount == 4)
    }
}
