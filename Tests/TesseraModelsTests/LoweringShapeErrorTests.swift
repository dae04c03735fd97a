import Foundation
import TesseraModels
import TesseraMultiArray
import TesseraTensor
import Testing

@testable import TesseraModels

/// A prediction whose shapes an op cannot take (possible with unknown input dimensions, or
/// a parameter the input's rank does not fit) throws ``LoweringError`` `.shapeMismatch`
/// naming the op; it never traps.
@Suite("Lowering: bad shapes at prediction throw, naming the op")
struct LoweringShapeErrorTests {
    typealias P = HandBuiltProgram

    /// One program, inputs it cannot take, and the op that must be named.
    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        /// The model file.
        var bytes: [UInt8]
        var given: [String: [Int]]
        var failing: String

        init(
            name: String, inputs: [(String, [Int?])], operations: [SpecBuilder.Body], outputs: [String],
            given: [String: [Int]], failing: String
        ) {
            self.name = name
            bytes = HandBuiltProgram(inputs: inputs, operations: operations, outputs: outputs).bytes()
            self.given = given
            self.failing = failing
        }

        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(
            name: "add of shapes that do not broadcast", inputs: [("a", [nil, 4]), ("b", [nil, 4])],
            operations: [P.op("add", "y", [("x", "a"), ("y", "b")])], outputs: ["y"],
            given: ["a": [2, 4], "b": [3, 4]], failing: "y"),
        Case(
            name: "select of shapes that do not broadcast", inputs: [("c", [nil]), ("a", [nil])],
            operations: [P.op("select", "s", [("cond", "c"), ("a", "a"), ("b", "a")], outputRanks: [1])],
            outputs: ["s"], given: ["c": [2], "a": [3]], failing: "s"),
        Case(
            name: "matmul with different inner sizes", inputs: [("a", [2, nil]), ("b", [nil, 3])],
            operations: [P.op("matmul", "m", [("x", "a"), ("y", "b")])], outputs: ["m"],
            given: ["a": [2, 5], "b": [4, 3]], failing: "m"),
        Case(
            name: "linear of an input that does not end in D_in", inputs: [("x", [2, nil])],
            operations: [
                P.floats("w", shape: [3, 4], [Float](repeating: 0.5, count: 12)),
                P.op("linear", "l", [("x", "x"), ("weight", "w")]),
            ], outputs: ["l"], given: ["x": [2, 5]], failing: "l"),
        Case(
            name: "reshape to a different element count", inputs: [("x", [nil])],
            operations: [P.ints("shape", [2, 3]), P.op("reshape", "r", [("x", "x"), ("shape", "shape")])],
            outputs: ["r"], given: ["x": [5]], failing: "r"),
        Case(
            name: "reshape with -1 where the known sizes do not divide the count", inputs: [("x", [nil])],
            operations: [P.ints("shape", [-1, 2]), P.op("reshape", "r", [("x", "x"), ("shape", "shape")])],
            outputs: ["r"], given: ["x": [5]], failing: "r"),
        Case(
            name: "reshape with two -1", inputs: [("x", [nil])],
            operations: [P.ints("shape", [-1, -1]), P.op("reshape", "r", [("x", "x"), ("shape", "shape")])],
            outputs: ["r"], given: ["x": [4]], failing: "r"),
        Case(
            name: "concat of shapes that differ off the axis", inputs: [("a", [nil, 2]), ("b", [nil, 2])],
            operations: [
                P.ints("axis", [1], scalar: true),
                SpecBuilder.operation(
                    "concat", name: "c", inputs: [("values", ["a", "b"]), ("axis", ["axis"])],
                    outputs: [("c", P.float([nil, nil]))]),
            ], outputs: ["c"], given: ["a": [2, 2], "b": [3, 2]], failing: "c"),
        Case(
            name: "softmax along an axis the input does not have", inputs: [("x", [nil, 3])],
            operations: [P.ints("axis", [4], scalar: true), P.op("softmax", "s", [("x", "x"), ("axis", "axis")])],
            outputs: ["s"], given: ["x": [2, 3]], failing: "s"),
        Case(
            name: "layer_norm whose gamma does not fit the normalized axis", inputs: [("x", [2, nil])],
            operations: [
                P.ints("axes", [-1]), P.floats("gamma", shape: [4], [1, 1, 1, 1]),
                P.op("layer_norm", "n", [("x", "x"), ("axes", "axes"), ("gamma", "gamma")]),
            ], outputs: ["n"], given: ["x": [2, 5]], failing: "n"),
        Case(
            name: "split into parts that do not divide the axis", inputs: [("x", [nil])],
            operations: [
                P.ints("axis", [0], scalar: true), P.ints("n", [2], scalar: true),
                P.op("split", "s", [("x", "x"), ("axis", "axis"), ("num_splits", "n")], outputRanks: [1, 1]),
            ], outputs: ["s", "s_1"], given: ["x": [3]], failing: "s"),
        Case(
            name: "squeeze of an axis that is not 1", inputs: [("x", [nil, 3])],
            operations: [P.ints("axes", [0]), P.op("squeeze", "q", [("x", "x"), ("axes", "axes")], outputRanks: [1])],
            outputs: ["q"], given: ["x": [2, 3]], failing: "q"),
        Case(
            name: "slice_by_size past the end", inputs: [("x", [nil])],
            operations: [
                P.ints("begin", [0]), P.ints("size", [4]),
                P.op("slice_by_size", "s", [("x", "x"), ("begin", "begin"), ("size", "size")], outputRanks: [1]),
            ], outputs: ["s"], given: ["x": [2]], failing: "s"),
        Case(
            name: "reflect padding wider than the axis", inputs: [("x", [1, nil])],
            operations: [
                P.ints("pad", [0, 0, 3, 3]), P.string("mode", "reflect"),
                P.op("pad", "p", [("x", "x"), ("pad", "pad"), ("mode", "mode")]),
            ], outputs: ["p"], given: ["x": [1, 2]], failing: "p"),
        Case(
            name: "a convolution kernel larger than the input", inputs: [("x", [1, 2, nil, nil])],
            operations: [
                P.floats("w", shape: [1, 2, 3, 3], [Float](repeating: 0.1, count: 18)),
                P.string("pad_type", "valid"),
                P.op("conv", "c", [("x", "x"), ("weight", "w"), ("pad_type", "pad_type")], outputRanks: [4]),
            ], outputs: ["c"], given: ["x": [1, 2, 2, 2]], failing: "c"),
        Case(
            name: "a pooling window larger than the input", inputs: [("x", [1, 1, nil, nil])],
            operations: [
                P.ints("k", [3, 3]), P.ints("s", [1, 1]), P.string("pad_type", "valid"),
                P.op(
                    "max_pool", "p", [("x", "x"), ("kernel_sizes", "k"), ("strides", "s"), ("pad_type", "pad_type")],
                    outputRanks: [4]),
            ], outputs: ["p"], given: ["x": [1, 1, 2, 2]], failing: "p"),
        Case(
            name: "attention with different query and key sizes", inputs: [("q", [1, 2, nil]), ("k", [1, 3, nil])],
            operations: [
                P.op(
                    "scaled_dot_product_attention", "a", [("query", "q"), ("key", "k"), ("value", "k")],
                    outputRanks: [3])
            ], outputs: ["a"], given: ["q": [1, 2, 4], "k": [1, 3, 5]], failing: "a"),
        Case(
            name: "depth_to_space of channels the block does not divide", inputs: [("x", [1, nil, 2, 2])],
            operations: [
                P.ints("b", [2], scalar: true),
                P.op("depth_to_space", "d", [("x", "x"), ("block_size", "b")], outputRanks: [4]),
            ], outputs: ["d"], given: ["x": [1, 3, 2, 2]], failing: "d"),
        Case(
            name: "stack of different shapes", inputs: [("a", [nil]), ("b", [nil])],
            operations: [
                P.ints("axis", [0], scalar: true),
                SpecBuilder.operation(
                    "stack", name: "s", inputs: [("values", ["a", "b"]), ("axis", ["axis"])],
                    outputs: [("s", P.float([nil, nil]))]),
            ], outputs: ["s"], given: ["a": [2], "b": [3]], failing: "s"),
        Case(
            name: "transpose with a permutation of another rank", inputs: [("x", [nil, 3])],
            operations: [P.ints("perm", [0]), P.op("transpose", "t", [("x", "x"), ("perm", "perm")])],
            outputs: ["t"], given: ["x": [2, 3]], failing: "t"),
        Case(
            name: "topk of more elements than the axis has", inputs: [("x", [nil])],
            operations: [
                P.ints("k", [3], scalar: true), P.op("topk", "t", [("x", "x"), ("k", "k")], outputRanks: [1, 1]),
            ], outputs: ["t", "t_1"], given: ["x": [2]], failing: "t"),
        Case(
            name: "prelu with a slope per channel for other channels", inputs: [("x", [1, nil, 2])],
            operations: [
                P.floats("alpha", shape: [4], [0.1, 0.1, 0.1, 0.1]),
                P.op("prelu", "p", [("x", "x"), ("alpha", "alpha")], outputRanks: [3]),
            ], outputs: ["p"], given: ["x": [1, 3, 2]], failing: "p"),
        Case(
            name: "a convolution of other input channels than the weight's", inputs: [("x", [1, nil, 4, 4])],
            operations: [
                P.floats("w", shape: [1, 2, 3, 3], [Float](repeating: 0.1, count: 18)),
                P.string("pad_type", "valid"),
                P.op("conv", "c", [("x", "x"), ("weight", "w"), ("pad_type", "pad_type")], outputRanks: [4]),
            ], outputs: ["c"], given: ["x": [1, 3, 4, 4]], failing: "c"),
        Case(
            name: "cumsum along an axis the input does not have", inputs: [("x", [nil, 3])],
            operations: [P.ints("axis", [2], scalar: true), P.op("cumsum", "c", [("x", "x"), ("axis", "axis")])],
            outputs: ["c"], given: ["x": [2, 3]], failing: "c"),
        Case(
            name: "reduce_sum along an axis the input does not have", inputs: [("x", [nil, 3])],
            operations: [
                P.ints("axes", [3]), P.op("reduce_sum", "r", [("x", "x"), ("axes", "axes")], outputRanks: [1]),
            ],
            outputs: ["r"], given: ["x": [2, 3]], failing: "r"),
        Case(
            name: "gather_along_axis with indices larger than the input", inputs: [("x", [nil, 2]), ("i", [nil, 3])],
            operations: [
                P.ints("axis", [0], scalar: true),
                P.op("gather_along_axis", "g", [("x", "x"), ("indices", "i"), ("axis", "axis")]),
            ], outputs: ["g"], given: ["x": [2, 2], "i": [1, 3]], failing: "g"),
        Case(
            name: "a broken op feeding others is the one named", inputs: [("a", [nil, 4]), ("b", [nil, 4])],
            operations: [
                P.op("add", "y", [("x", "a"), ("y", "b")]),
                P.floats("w", shape: [3, 4], [Float](repeating: 0.5, count: 12)),
                P.op("linear", "l", [("x", "y"), ("weight", "w")]),
                P.ints("axis", [-1], scalar: true),
                P.op("softmax", "s", [("x", "l"), ("axis", "axis")]),
                P.ints("shape", [-1, 3, 1, 1]),
                P.op("reshape", "r", [("x", "s"), ("shape", "shape")], outputRanks: [4]),
                P.floats("k", shape: [1, 3, 1, 1], [1, 1, 1]), P.string("pad_type", "valid"),
                P.op("conv", "c", [("x", "r"), ("weight", "k"), ("pad_type", "pad_type")], outputRanks: [4]),
            ], outputs: ["c"], given: ["a": [2, 4], "b": [3, 4]], failing: "y"),
    ]

    @Test("the prediction throws shapeMismatch naming the op", arguments: cases)
    func throwsNamingTheOp(_ testCase: Case) throws {
        let function = try HandBuiltProgram.lowered(testCase.bytes)
        var inputs: [String: MLTensor] = [:]
        for (name, shape) in testCase.given {
            inputs[name] = MLTensor(repeating: 0.5, shape: shape)
        }
        #expect {
            let outputs = try function.run(inputs)
            MLTensor.materialize(Array(outputs.values))
        } throws: { error in
            guard let error = error as? LoweringError else { return false }
            return error.kind == .shapeMismatch && error.message.contains("operation '\(testCase.failing)'")
        }
    }

    @Test(
        "the message is the MLTensor rule's, under the op's name",
        arguments: [
            ("matmul with different inner sizes", "[matmul] inner dimensions differ"),
            ("a convolution of other input channels than the weight's", "[conv2d]"),
            ("softmax along an axis the input does not have", "axis 4 is out of range"),
        ])
    func ruleMessage(_ name: String, _ fragment: String) throws {
        let testCase = try #require(Self.cases.first { $0.name == name })
        let function = try HandBuiltProgram.lowered(testCase.bytes)
        let inputs = testCase.given.mapValues { MLTensor(repeating: 0.5, shape: $0) }
        #expect {
            _ = try function.run(inputs)
        } throws: { error in
            "\(error)".contains("operation '\(testCase.failing)'") && "\(error)".contains(fragment)
        }
    }

    @Test("the same shapes through MLModel throw MLModelError naming the op")
    func throughMLModel() throws {
        let model = try MLModel(contentsOf: modelFixture("batch_mlp.mlpackage"))
        expectModelError(.generic, containing: ["'y'", "prediction failed"]) {
            _ = try model.prediction(
                from: MLDictionaryFeatureProvider(dictionary: [
                    "x": MLShapedArray<Float>(repeating: 0.5, shape: [2, 8]),
                    "z": MLShapedArray<Float>(repeating: 0.5, shape: [3, 4]),
                ]))
        }
    }

    @Test("an input the description allows but the program's type does not is refused once, as featureType")
    func programInputType() throws {
        // The description gives "x" no shape; the program fixes it at [1, 4].
        let program = HandBuiltProgram(
            inputs: [("x", [1, 4])], operations: [P.op("relu", "y", [("x", "x")])], outputs: ["y"])
        func feature(_ name: String) -> SpecBuilder.Body {
            { feature in
                feature.writeString(name, field: 1)
                feature.writeMessage(field: 3) { type in
                    type.writeMessage(field: 5) { $0.writeInt64(65568, field: 2) }
                }
            }
        }
        let url = try program.write { description in
            description.writeMessage(field: 1, feature("x"))
            description.writeMessage(field: 10, feature("y"))
        }
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        let model = try MLModel(contentsOf: url)
        expectModelError(.featureType, containing: ["'x'", "[1, 5]", "fp32[1, 4]"]) {
            _ = try model.prediction(
                from: MLDictionaryFeatureProvider(dictionary: ["x": MLShapedArray<Float>(repeating: 1, shape: [1, 5])]))
        }
    }
}
