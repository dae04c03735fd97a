import Foundation
import TesseraMultiArray
import TesseraTensor
import Testing
import _TesseraTestSupport

@testable import TesseraModels

/// Bad inputs `Docs/Reliability.md` lists that no other suite tries: malformed `.npy` headers,
/// NaN and infinities in feature values, and shapes too large to describe.
@Suite("Reliability: bad inputs")
struct ReliabilityBadInputTests {
    /// An `.npy` file with `header` (padded as NumPy pads it) and `payload`.
    static func npy(_ header: String, version: UInt8 = 1, payload: [UInt8] = []) -> Data {
        var bytes: [UInt8] = [0x93, 0x4E, 0x55, 0x4D, 0x50, 0x59, version, 0]
        let text = Array(header.utf8) + [0x0A]
        bytes += [UInt8(text.count & 0xFF), UInt8(text.count >> 8)]
        return Data(bytes + text + payload)
    }

    static let malformedNumPy: [(String, Data, String)] = [
        ("bad magic", Data([0x93, 0x4E, 0x55, 0x4D, 0x50, 0x58, 1, 0, 0, 0]), "bad magic"),
        ("too short", Data([0x93, 0x4E]), "bad magic"),
        ("unknown version", npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", version: 9), "version 9"),
        ("header past the end", Data([0x93, 0x4E, 0x55, 0x4D, 0x50, 0x59, 1, 0, 0xFF, 0x7F]), "past the end"),
        ("no descr", npy("{'fortran_order': False, 'shape': (1,), }"), "no 'descr'"),
        ("Fortran order", npy("{'descr': '<f4', 'fortran_order': True, 'shape': (1,), }"), "Fortran"),
        ("negative dimension", npy("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }"), "bad shape"),
        ("malformed shape", npy("{'descr': '<f4', 'fortran_order': False, 'shape': 3, }"), "malformed"),
        ("unsupported dtype", npy("{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }"), "unsupported dtype"),
        (
            "shape overflowing Int",
            npy("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }"), "too large"
        ),
        (
            "payload shorter than the shape",
            npy("{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", payload: [0, 0]),
            "needs 16"
        ),
    ]

    @Test("malformed .npy files throw NumPyFileError saying what is wrong", arguments: malformedNumPy.indices)
    func malformedNumPyFile(_ index: Int) {
        let (label, data, fragment) = Self.malformedNumPy[index]
        do {
            _ = try NumPyArray(data: data, name: "bad.npy")
            Issue.record("\(label): no error")
        } catch {
            #expect(error.description.hasPrefix("bad.npy: "), "\(label): \(error.description)")
            #expect(error.description.contains(fragment), "\(label): \(error.description)")
        }
    }

    @Test("NaN and infinities in a feature value are computed as IEEE arithmetic; the model stays usable")
    func nonFiniteFeatureValues() throws {
        let model = try MLModel(contentsOf: modelFixture("linear_relu_softmax.mlpackage"))
        let clean = (0..<8).map { Float($0) / 8 - 0.5 }
        func predict(_ x: [Float]) throws -> [Float] {
            let input = MLDictionaryFeatureProvider(features: [
                "x": MLFeatureValue(multiArray: MLMultiArray(MLShapedArray(scalars: x, shape: [1, 8])))
            ])
            let output = try model.prediction(from: input).featureValue(for: "softmax_0")?.multiArrayValue
            return MLShapedArray<Float>(converting: try #require(output)).scalars
        }
        let baseline = try predict(clean)
        let finite = baseline.allSatisfy { $0.isFinite }
        #expect(finite)
        // A NaN reaches every logit through the linear layer, so softmax is NaN throughout (NumPy
        // gives the same: np.exp(nan - nan)).
        var withNaN = clean
        withNaN[3] = .nan
        let allNaN = try predict(withNaN).allSatisfy { $0.isNaN }
        #expect(allNaN)
        var withInfinity = clean
        withInfinity[0] = .infinity
        #expect(try predict(withInfinity).count == 16)
        #expect(try predict(clean) == baseline)
    }

    @Test("an input with an empty dimension is refused as .featureType")
    func emptyDimension() throws {
        let model = try MLModel(contentsOf: modelFixture("linear_relu_softmax.mlpackage"))
        let empty = try MLMultiArray(shape: [1, 0], dataType: .float32)
        expectModelError(.featureType, containing: ["\"x\"", "[1, 0]"]) {
            _ = try model.prediction(
                from: MLDictionaryFeatureProvider(features: ["x": MLFeatureValue(multiArray: empty)]))
        }
    }

    /// `neuralnetwork/activation_relu` (coremltools' NeuralNetworkBuilder, input `x` of shape
    /// `[3, 4, 5]`): the NeuralNetwork engine checks inputs as the ML program one does.
    @Test("a NeuralNetwork model refuses inputs of the wrong shape or type as .featureType, then predicts")
    func neuralNetworkBadInputs() throws {
        let model = try MLModel(contentsOf: Fixtures.url("neuralnetwork/activation_relu/model.mlmodel"))
        let x = try Fixtures.npy("neuralnetwork/activation_relu/x.npy")
        let expected = try Fixtures.npy("neuralnetwork/activation_relu/expected_y.npy")
        let wrongShape = MLMultiArray(MLShapedArray<Float>(repeating: 1, shape: [3, 4, 6]))
        let bad: [MLFeatureValue] = [
            MLFeatureValue(multiArray: wrongShape), MLFeatureValue(string: "x"), MLFeatureValue(double: 1),
        ]
        for value in bad {
            expectModelError(.featureType, containing: ["\"x\""]) {
                _ = try model.prediction(from: MLDictionaryFeatureProvider(features: ["x": value]))
            }
        }
        expectModelError(.featureType, containing: ["\"x\""]) {
            _ = try model.prediction(from: MLDictionaryFeatureProvider(features: [:]))
        }
        let good = MLDictionaryFeatureProvider(features: [
            "x": MLFeatureValue(multiArray: MLMultiArray(MLShapedArray<Float>(scalars: x.floats, shape: x.shape)))
        ])
        let output = try #require(try model.prediction(from: good).featureValue(for: "y")?.multiArrayValue)
        #expect(MLShapedArray<Float>(converting: output).scalars == expected.floats)
    }

    @Test("a multi-array shape whose element or byte count overflows throws .invalidShape")
    func overflowingMultiArrayShape() {
        for shape in [[1 << 32, 1 << 32], [Int.max / 2, 3], [Int.max / 4 + 1]] {
            #expect(throws: MLMultiArrayError.self, "\(shape)") {
                _ = try MLMultiArray(shape: shape.map { NSNumber(value: $0) }, dataType: .float32)
            }
        }
    }

    /// Lengths from NumPy: `len(np.arange(start, end, step))` for each row.
    static let rangeLengths: [(Double, Double, Double, Int)] = [
        (0, 10, 3, 4), (5, 0, -2, 3), (0, -1, 1, 0), (0, 1, 0.25, 4), (2, 2, 1, 0), (-3, 3, 1, 6),
    ]

    /// MIL `range_1d` and NeuralNetwork `rangeStatic` / `rangeDynamic` all count through this.
    @Test("a range has NumPy's length; a zero step or an absurd length throws")
    func rangeLengthRule() throws {
        for (start, end, step, length) in Self.rangeLengths {
            let count = try LoweredFunction.rangeCount(start: start, end: end, step: step)
            #expect(count == length, "\(start) \(end) \(step)")
        }
        let cap = Double(LoweredFunction.maximumRangeCount)
        for (start, end, step, message) in [
            (0.0, 1.0, 0.0, "step must not be 0"), (0, .infinity, 1, "not a finite count"),
            (0, cap, 1, "more than"), (0, 1e12, 1, "more than"), (0, 1, 1e-30, "more than"),
        ] {
            let error = #expect(throws: OperandError.self, "\(start) \(end) \(step)") {
                try LoweredFunction.rangeCount(start: start, end: end, step: step)
            }
            #expect(error?.message.contains(message) == true, "\(error?.message ?? "")")
        }
        let largest = try LoweredFunction.rangeCount(start: 0, end: cap - 1, step: 1)
        #expect(largest == LoweredFunction.maximumRangeCount - 1)
    }

    /// Ranges, random draws and masks are made on the host while a prediction builds its
    /// graph; inside a prediction with a memory limit their Float32 bytes must fit it.
    @Test("values made on the host count against the prediction's memory limit, and only inside one")
    func hostValuesWithinMemoryLimit() throws {
        let limit = 1 << 20  // 262,144 Float32 elements
        try LoweredFunction.withPredictionMemoryLimit(limit) { () throws in
            #expect(try LoweredFunction.rangeCount(start: 0, end: 262_144, step: 1) == 262_144)
            #expect(try MILOp.randomShape([512, 512]) == [512, 512])
            for attempt in [
                { _ = try LoweredFunction.rangeCount(start: 0, end: 262_145, step: 1) },
                { _ = try MILOp.randomShape([512, 513]) },
                { try LoweredFunction.requireHostValue(shape: [1 << 40, 1 << 40], "a mask") },
            ] {
                let error = #expect(throws: OperandError.self) { try attempt() }
                let message = error?.message ?? ""
                #expect(message.contains("memory limit") || message.contains("more elements"), "\(message)")
            }
        }
        // Outside a prediction with a limit only the element cap applies.
        #expect(try LoweredFunction.rangeCount(start: 0, end: 262_145, step: 1) == 262_145)
        #expect(try MILOp.randomShape([512, 513]) == [512, 513])
        #expect(throws: OperandError.self) { try MILOp.randomShape([1 << 14, 1 << 14]) }
        #expect(throws: OperandError.self) { try MILOp.randomShape([4, -1]) }
    }

    /// NeuralNetwork models made by coremltools with one size field set to what no model has
    /// (`tools/make_huge_size_fixtures.py`): a uint64 channel count beyond Int, weight and
    /// reshape shapes whose element counts overflow, a declared output shape that does, a slice
    /// size of 2⁶³ − 1. Converting, adding or multiplying those sizes trapped. Each input is ones
    /// of its declared shape (a slice begins at 1).
    @Test("NeuralNetwork size fields beyond Int or whose sums and products overflow give a typed error, never a trap")
    func hugeNeuralNetworkSizes() throws {
        let directory = Fixtures.url("reliability/huge-sizes")
        let files = try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "mlmodel" }
        #expect(files.count == 5)
        for file in files {
            #expect(throws: MLModelError.self, "\(file.lastPathComponent)") {
                let model = try MLModel(contentsOf: file)
                var inputs: [String: Any] = [:]
                for (name, description) in model.modelDescription.inputDescriptionsByName {
                    let shape = try #require(description.multiArrayConstraint?.shape)
                    let array = try MLMultiArray(shape: shape, dataType: .float32)
                    for index in 0..<array.count { array[index] = 1 }
                    inputs[name] = array
                }
                _ = try model.prediction(from: MLDictionaryFeatureProvider(dictionary: inputs))
            }
        }
    }

    /// ML program integer parameters may come from float constants holding up to 1e15; they are
    /// clamped below 2³¹ (`OperationLowering.ints`), so a dilation of 1e14 gives a window the
    /// arithmetic can hold. With `same` padding every row of taps but the centre one falls in
    /// the padding.
    @Test("a conv whose height dilation is 1e14 computes, every tap row but the centre in the padding")
    func hugeDilation() throws {
        let program = HandBuiltProgram(
            inputs: [("x", [1, 1, 8, 8])],
            operations: [
                HandBuiltProgram.floats("w", shape: [1, 1, 3, 3], [Float](repeating: 1, count: 9)),
                HandBuiltProgram.ints("s", [1, 1]), HandBuiltProgram.floats("d", shape: [2], [1e14, 1]),
                HandBuiltProgram.ints("g", [1], scalar: true), HandBuiltProgram.string("p", "same"),
                HandBuiltProgram.op(
                    "conv", "y",
                    [
                        ("x", "x"), ("weight", "w"), ("strides", "s"), ("dilations", "d"), ("groups", "g"),
                        ("pad_type", "p"),
                    ],
                    outputRanks: [4]),
            ],
            outputs: ["y"])
        let function = try program.lowered()
        let values = (0..<64).map { Float($0) }
        let x = MLTensor(shape: [1, 1, 8, 8], scalars: values, scalarType: Float.self)
        let y = try #require(try function.run(["x": x])["y"])
        #expect(y.shape == [1, 1, 8, 8])
        // Dilations [1e14, 1]: along H only the centre row of taps lands in the image; along W
        // the three taps sum neighbours, zeros beyond the edges.
        let expected = (0..<64).map { index -> Float in
            let (row, column) = (index / 8, index % 8)
            return (column - 1...column + 1).filter { (0..<8).contains($0) }.map { values[row * 8 + $0] }
                .reduce(0, +)
        }
        #expect(y.scalars(of: Float.self) == expected)
    }

    /// The integer parameters of both model kinds (ML program constants through
    /// `OperationLowering.ints`, NeuralNetwork fields through `ProtobufFieldTable.int` / `ints`)
    /// are clamped to ±(2³¹ − 1): sums and products of two cannot overflow.
    @Test("integer parameters are clamped to ±(2^31 - 1), keeping their sign")
    func clampedParameters() {
        let limit = Int(Int32.max)
        for (value, clamped) in [
            (0, 0), (-1, -1), (3, 3), (limit, limit), (-limit, -limit), (limit + 1, limit), (Int.max, limit),
            (Int.min, -limit), (-(1 << 40), -limit),
        ] {
            #expect(LoweredFunction.clampedParameter(value) == clamped, "\(value)")
        }
        #expect(LoweredFunction.clampedParameter(Int.max) + LoweredFunction.clampedParameter(Int.max) == 2 * limit)
    }
}
