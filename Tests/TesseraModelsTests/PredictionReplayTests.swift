import Foundation
import TesseraMultiArray
import TesseraTensor
import Testing
import _TesseraTestSupport

@testable import TesseraModels

/// Predictions that replay a recorded plan (``PredictionReplay``): the same bits as building the
/// graph every time, and no replay where the graph depends on input values or on values made
/// while building it. Each model is compared with a second copy whose replay is turned off.
@Suite("Prediction replay: the recorded plan runs again on new inputs")
struct PredictionReplayTests {
    /// A provider of `arrays` by name.
    static func provider(_ arrays: [String: MLMultiArray]) throws -> MLDictionaryFeatureProvider {
        try MLDictionaryFeatureProvider(dictionary: arrays.mapValues { MLFeatureValue(multiArray: $0) })
    }

    /// A float32 array of `shape` with values from `random`.
    static func array(_ shape: [Int], _ random: inout SeededRandom) -> MLMultiArray {
        MLMultiArray(MLShapedArray<Float>(scalars: random.floats(shape.reduce(1, *)), shape: shape))
    }

    /// Every output of `output` as its float32 elements, by name.
    static func floats(_ output: any MLFeatureProvider) -> [String: [Float]] {
        var values: [String: [Float]] = [:]
        for name in output.featureNames {
            if let array = output.featureValue(for: name)?.multiArrayValue {
                values[name] = MLShapedArray<Float>(converting: array).scalars
            }
        }
        return values
    }

    /// A blocking prediction (from an `async` test, Swift would pick the `async` overload).
    static func blocking(_ model: MLModel, _ input: any MLFeatureProvider) throws -> [String: [Float]] {
        floats(try model.prediction(from: input))
    }

    /// Two copies of the fixture model `name`: one replaying, one whose replay is off.
    static func pair(_ name: String) throws -> (replaying: MLModel, building: MLModel) {
        let url = Fixtures.url(name)
        let building = try MLModel(contentsOf: url)
        building.replay.refuse()
        return (try MLModel(contentsOf: url), building)
    }

    @Test("a stateless program replays from its third prediction, with the bits of a built graph")
    func replaysWithSameBits() async throws {
        let (replaying, building) = try Self.pair("models/conv_fp32.mlpackage")
        var random = SeededRandom(seed: 7)
        for index in 0..<6 {
            let input = try Self.provider(["image": Self.array([1, 3, 8, 8], &random)])
            // Blocking and async predictions share the recording.
            let got =
                index % 2 == 0
                ? try Self.blocking(replaying, input)
                : Self.floats(try await replaying.prediction(from: input))
            let want = try Self.blocking(building, input)
            #expect(!got.isEmpty && got == want, "prediction \(index)")
            #expect((replaying.replay.confirmed != nil) == (index >= 1), "prediction \(index)")
        }
        #expect(!replaying.replay.isRefused && building.replay.confirmed == nil)
    }

    @Test("the tensor API replays too, with the same bits")
    func tensorPredictionReplays() async throws {
        let (replaying, building) = try Self.pair("models/conv_fp32.mlpackage")
        var random = SeededRandom(seed: 9)
        for _ in 0..<4 {
            let image = MLTensor(shape: [1, 3, 8, 8], scalars: random.floats(192), scalarType: Float.self)
            let got = try await replaying.prediction(from: ["image": image])
            let want = try await building.prediction(from: ["image": image])
            #expect(got.keys.sorted() == want.keys.sorted())
            for (name, tensor) in want {
                let a = await got[name]!.shapedArray(of: Float.self).scalars
                let b = await tensor.shapedArray(of: Float.self).scalars
                #expect(a == b, "\(name)")
            }
        }
        #expect(replaying.replay.confirmed != nil)
    }

    @Test("inputs of other shapes are recorded anew and give a built graph's bits")
    func otherShapesRecordAgain() throws {
        let (replaying, building) = try Self.pair("models/flexible_shapes.mlpackage")
        var random = SeededRandom(seed: 11)
        for length in [4, 4, 4, 16, 16, 4, 16, 16, 16, 4] {
            let input = try Self.provider([
                "tokens": Self.array([1, length, 8], &random), "mask": Self.array([1, length, 8], &random),
            ])
            let got = Self.floats(try replaying.prediction(from: input))
            let want = Self.floats(try building.prediction(from: input))
            #expect(!got.isEmpty && got == want, "length \(length)")
        }
    }

    @Test("many tasks predicting at once on one replaying model get a built graph's bits")
    func concurrentReplays() async throws {
        let (replaying, building) = try Self.pair("models/conv_fp32.mlpackage")
        var random = SeededRandom(seed: 13)
        let inputs = (0..<16).map { _ in MLShapedArray<Float>(scalars: random.floats(192), shape: [1, 3, 8, 8]) }
        let wants = try inputs.map { try Self.blocking(building, try Self.provider(["image": MLMultiArray($0)])) }
        let gots = try await withThrowingTaskGroup(of: (Int, [String: [Float]]).self) { group in
            for _ in 0..<4 {
                for (index, input) in inputs.enumerated() {
                    group.addTask {
                        let output = try await replaying.prediction(
                            from: try Self.provider(["image": MLMultiArray(input)]))
                        return (index, Self.floats(output))
                    }
                }
            }
            var results: [(Int, [String: [Float]])] = []
            for try await result in group { results.append(result) }
            return results
        }
        #expect(gots.count == 64)
        for (index, got) in gots { #expect(got == wants[index], "input \(index)") }
        #expect(replaying.replay.confirmed != nil)
    }
}
