import Foundation
import TesseraTensor
import Testing
import _TesseraTestSupport

@testable import TesseraModels

/// Bad models fail the load, bad inputs fail the prediction; neither traps.
@Suite("Lowering errors")
struct LoweringErrorTests {
    @Test("an unsupported op fails the load, naming the op type and the model")
    func unsupportedOperation() throws {
        // An op type no op set defines, so the test does not depend on what Tessera lowers.
        let program = HandBuiltProgram(
            inputs: [("x", [2, 3])], operations: [HandBuiltProgram.op("frobnicate", "y", [("x", "x")])],
            outputs: ["y"])
        #expect {
            try program.lowered()
        } throws: { error in
            guard let error = error as? ModelFormatError else { return false }
            return error.kind == .unsupportedModelType && error.file == "model.mlmodel"
                && error.description.contains("(op type 'frobnicate') is not supported by Tessera")
        }
    }

    @Test("a value too large to allocate fails the prediction, not the process")
    func oversizedValue() throws {
        let fixture = try #require(LoweringFixture.named("invalid_oversized_tile"))
        let function = try LoweredFunction(package: try fixture.package(), functionName: "main")
        #expect {
            try function.run(try fixture.inputTensors())
        } throws: { error in
            (error as? LoweringError)?.kind == .shapeMismatch && "\(error)".contains("'tile'")
        }
    }

    @Test("an unknown function name fails the load")
    func unknownFunction() throws {
        let package = try #require(LoweringFixture.named("relu")).package()
        #expect(throws: ModelFormatError.self) { try LoweredFunction(package: package, functionName: "other") }
    }

    @Test("a missing input throws")
    func missingInput() throws {
        let fixture = try #require(LoweringFixture.named("add"))
        let function = try LoweredFunction(package: try fixture.package(), functionName: "main")
        var inputs = try fixture.inputTensors()
        inputs["y"] = nil
        #expect {
            try function.run(inputs)
        } throws: { error in
            (error as? LoweringError)?.kind == .missingInput && "\(error)".contains("'y'")
        }
    }

    @Test("an input of the wrong rank or size throws")
    func wrongShape() throws {
        let fixture = try #require(LoweringFixture.named("conv_valid"))
        let function = try LoweredFunction(package: try fixture.package(), functionName: "main")
        for shape in [[4, 7, 6], [1, 4, 7, 5], [1, 1, 4, 7, 6]] {
            let x = MLTensor(repeating: 0, shape: shape)
            #expect {
                try function.run(["x": x])
            } throws: { error in
                (error as? LoweringError)?.kind == .invalidInput
            }
        }
    }

    @Test("an input of another numeric type is converted")
    func convertedInput() throws {
        let fixture = try #require(LoweringFixture.named("relu"))
        let function = try LoweredFunction(package: try fixture.package(), functionName: "main")
        let x = MLTensor(shape: [2, 3, 4], scalars: (0..<24).map { Float16(Float($0) - 12) }, scalarType: Float16.self)
        let y = try #require(try function.run(["x": x]).values.first)
        #expect(y.scalars(of: Float.self) == (0..<24).map { Swift.max(Float($0) - 12, 0) })
    }

    @Test("a Float16 model takes and returns Float16 tensors")
    func float16Outputs() throws {
        let fixture = try #require(LoweringFixture.named("float16_io"))
        let function = try LoweredFunction(package: try fixture.package(), functionName: "main")
        #expect(function.inputs[0].type.tensorType?.dataType == .float16)
        let outputs = try function.run(try fixture.inputTensors())
        let y = try #require(outputs[fixture.outputs[0]])
        #expect(y.scalarType is Float16.Type)
    }

    @Test("reports inputs and outputs in declaration order")
    func signature() throws {
        let fixture = try #require(LoweringFixture.named("transformer_block"))
        let function = try LoweredFunction(package: try fixture.package(), functionName: "main")
        #expect(function.inputs.map(\.name) == ["x", "mask"])
        #expect(function.inputs[0].type.tensorType?.shape == [1, 6, 16])
        #expect(function.outputNames == fixture.outputs)
        #expect(function.classifier == nil)
    }

    /// A size a program computes at prediction time becomes an `Int` through
    /// `LoweredFunction.computedCount`, never `Int(_:)`, which traps on NaN and huge values.
    @Test("a one_hot size computed as NaN, infinity, a negative or a huge number throws, not traps")
    func computedOneHotSize() throws {
        let program = HandBuiltProgram(
            inputs: [("d", [1])],
            operations: [
                HandBuiltProgram.ints("i", [0, 2]),
                HandBuiltProgram.op("one_hot", "y", [("indices", "i"), ("one_hot_vector_size", "d")]),
            ],
            outputs: ["y"])
        let function = try program.lowered()
        func size(_ value: Float) -> [String: MLTensor] {
            ["d": MLTensor(shape: [1], scalars: [value], scalarType: Float.self)]
        }
        let y = try #require(try function.run(size(3))["y"])
        #expect(y.shape == [2, 3])
        #expect(y.scalars(of: Float.self) == [1, 0, 0, 0, 0, 1])
        for bad: Float in [.nan, .infinity, -3, 1e30] {
            let error = #expect(throws: LoweringError.self, "\(bad)") { try function.run(size(bad)) }
            #expect(error?.description.contains("one_hot_vector_size") == true, "\(String(describing: error))")
        }
    }
}
