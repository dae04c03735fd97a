import Foundation
import TesseraMultiArray
import TesseraTensor
import Testing
import _TesseraTestSupport

@testable import TesseraModels

/// MIL `random_categorical` and the NeuralNetwork `categoricalDistribution` layer, which draw
/// through `MILOp.categoricalSamples`: class frequencies against probabilities computed here,
/// seeds, and rows a prediction's feature values can make unusable (NaN, infinities, negative
/// or all-zero probabilities), which must give indices in range and never trap.
@Suite("Categorical sampling in models")
struct CategoricalSamplingTests {
    typealias P = HandBuiltProgram

    /// A program `y = random_categorical(x, mode, size, seed)` on a float32 input of `shape`.
    static func program(shape: [Int], mode: String, size: Int, seed: Int) throws -> LoweredFunction {
        try HandBuiltProgram(
            inputs: [("x", shape)],
            operations: [
                P.string("mode", mode), P.ints("size", [size], scalar: true), P.ints("seed", [seed], scalar: true),
                P.op(
                    "random_categorical", "y", [("x", "x"), ("mode", "mode"), ("size", "size"), ("seed", "seed")],
                    outputRanks: [shape.count]),
            ],
            outputs: ["y"]
        ).lowered()
    }

    /// Runs `function` on `x` of `shape` and returns `y`'s shape and values.
    static func draw(_ function: LoweredFunction, _ x: [Float], shape: [Int]) throws -> ([Int], [Float]) {
        let y = try #require(try function.run(["x": MLTensor(shape: shape, scalars: x, scalarType: Float.self)])["y"])
        return (y.shape, y.scalars(of: Float.self))
    }

    @Test("logits and probs: frequencies follow the probabilities, row by row", arguments: ["logits", "probs"])
    func frequencies(_ mode: String) throws {
        let (rows, classes, size) = (3, 4, 20_000)
        let rowValues: [[Double]] =
            mode == "logits"
            ? [[0, 1, 2, 3], [-1, 0.5, 0.5, -3], [2, 2, 2, 2]]
            : [[0.1, 0.2, 0.3, 0.4], [0, 0.5, 0.25, 0.25], [3, 0, 0, 1]]
        // The expected probabilities, in Double: softmax of the logits, or the weights over their sum.
        let probabilities = rowValues.map { row -> [Double] in
            let weights = mode == "logits" ? row.map { Foundation.exp($0 - row.max()!) } : row
            let total = weights.reduce(0, +)
            return weights.map { $0 / total }
        }
        let function = try Self.program(shape: [rows, classes], mode: mode, size: size, seed: 5)
        let x = rowValues.flatMap { $0.map { Float($0) } }
        let (shape, values) = try Self.draw(function, x, shape: [rows, classes])
        #expect(shape == [rows, size])
        for (row, expected) in probabilities.enumerated() {
            let drawn = values[(row * size)..<((row + 1) * size)]
            #expect(drawn.allSatisfy { $0 >= 0 && $0 < Float(classes) && $0 == $0.rounded() })
            for (label, p) in expected.enumerated() {
                let frequency = Double(drawn.filter { $0 == Float(label) }.count) / Double(size)
                // Five standard errors; a zero-probability class is never drawn.
                let bound = p == 0 ? 0 : 5 * (p * (1 - p) / Double(size)).squareRoot()
                #expect(abs(frequency - p) <= bound, "\(mode) row \(row) class \(label): \(frequency), expected \(p)")
            }
        }
        // Seeded: the same draws every prediction.
        #expect(try Self.draw(function, x, shape: [rows, classes]).1 == values)
    }

    @Test("unseeded (seed −1): fresh draws every prediction")
    func unseeded() throws {
        let function = try Self.program(shape: [1, 4], mode: "probs", size: 1000, seed: -1)
        let x: [Float] = [0.25, 0.25, 0.25, 0.25]
        #expect(try Self.draw(function, x, shape: [1, 4]).1 != (try Self.draw(function, x, shape: [1, 4]).1))
    }

    @Test("probs: NaN, infinite and negative weights count as 0; a row without weight draws class 0")
    func unusableProbabilities() throws {
        let (nan, inf) = (Float.nan, Float.infinity)
        let rows: [[Float]] = [
            [nan, 0.5, 0.5, 0],  // classes 1 and 2
            [0, 0, 0, 0],  // class 0
            [-1, inf, 2, 0],  // class 2
            [nan, nan, nan, nan],  // class 0
            [-inf, -1, 0, 0],  // class 0
        ]
        let size = 200
        let function = try Self.program(shape: [rows.count, 4], mode: "probs", size: size, seed: 3)
        let (shape, values) = try Self.draw(function, rows.flatMap { $0 }, shape: [rows.count, 4])
        #expect(shape == [rows.count, size])
        let drawn = (0..<rows.count).map { Set(values[($0 * size)..<(($0 + 1) * size)]) }
        #expect(drawn[0] == [1, 2], "\(drawn[0])")
        #expect(drawn[1] == [0] && drawn[2] == [2] && drawn[3] == [0] && drawn[4] == [0], "\(drawn)")
    }

    @Test("logits: NaN and infinite logits give indices in range, unseeded too", arguments: [3, -1])
    func unusableLogits(_ seed: Int) throws {
        let (nan, inf) = (Float.nan, Float.infinity)
        let rows: [[Float]] = [[nan, 1, 2, 3], [-inf, -inf, -inf, -inf], [0, inf, 0, 0], [inf, inf, -inf, 1]]
        let function = try Self.program(shape: [rows.count, 4], mode: "logits", size: 50, seed: seed)
        let (shape, values) = try Self.draw(function, rows.flatMap { $0 }, shape: [rows.count, 4])
        #expect(shape == [rows.count, 50])
        #expect(values.allSatisfy { $0 >= 0 && $0 < 4 && $0 == $0.rounded() })
    }

    @Test("categoricalDistribution: unusable probability rows through a model's prediction")
    func neuralNetworkLayer() throws {
        // probs [2, 3] in, numSamples 4000, isLogits false, seed 4.
        let fixture = try #require(NeuralNetworkFixture.random.first { $0.name == "categorical_distribution" })
        let model = try MLModel(contentsOf: fixture.url)
        func predict(_ x: [Float]) throws -> [[Float]] {
            let input = try MLDictionaryFeatureProvider(dictionary: [
                "x": MLFeatureValue(multiArray: MLMultiArray(MLShapedArray<Float>(scalars: x, shape: [2, 3])))
            ])
            let array = try #require(try model.prediction(from: input).featureValue(for: "y")?.multiArrayValue)
            let values = MLShapedArray<Float>(converting: array).scalars
            #expect(array.shape.map(\.intValue) == [2, 4000])
            return [Array(values[0..<4000]), Array(values[4000...])]
        }
        let empty = try predict([.nan, .nan, .nan, 0, 0, 0])
        #expect(empty.allSatisfy { $0.allSatisfy { $0 == 0 } })
        let partial = try predict([0.2, .nan, -1, .infinity, 0, 0.5])
        #expect(Set(partial[0]) == [0] && Set(partial[1]) == [2])
        // The model still draws from usable rows afterwards.
        let usable = try predict([0.5, 0.5, 0, 0, 0, 1])
        #expect(Set(usable[0]) == [0, 1] && Set(usable[1]) == [2])
    }
}
