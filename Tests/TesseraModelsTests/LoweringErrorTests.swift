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
        let fixture = try #require(LoweringFixture.named("unsupported_einsum"))
        let package = try fixture.package()
        #expect {
            try LoweredFunction(package: package, functionName: "main")
        } throws: { error in
            guard let error = error as? ModelFormatError else { return false }
            return error.kind == .unsupportedModelType && error.file == "model.mlmodel"
                && error.description.contains("(op type 'einsum') is not supported by Tessera")
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
}

/// The format layer's model fixtures (`Tests/Fixtures/models/`) through the lowering.
@Suite("Lowering model fixtures")
struct LoweringModelFixtureTests {
    @Test(
        "every ML-program fixture of the format layer lowers",
        arguments: ["linear_relu_softmax", "conv_fp32", "conv_fp16", "classifier", "quantized", "flexible_shapes"])
    func lowers(_ name: String) throws {
        let package = try CoreMLPackage(contentsOf: Fixtures.url("models/\(name).mlpackage"))
        let function = try LoweredFunction(package: package, functionName: "main")
        #expect(!function.inputs.isEmpty)
        #expect(function.outputNames.count == package.model.description.outputs.count)
    }

    @Test("flexible input shapes run at any size the declared type allows")
    func flexibleShapes() throws {
        let package = try CoreMLPackage(contentsOf: Fixtures.url("models/flexible_shapes.mlpackage"))
        let function = try LoweredFunction(package: package, functionName: "main")
        for (length, maskLength) in [(1, 2), (10, 16), (64, 4)] {
            let tokens = MLTensor(repeating: 1, shape: [1, length, 8])
            let maskValues = (0..<(maskLength * 8)).map { Float($0 % 5) - 2 }
            let mask = MLTensor(shape: [1, maskLength, 8], scalars: maskValues, scalarType: Float.self)
            let outputs = try function.run(["tokens": tokens, "mask": mask])
            let shapes = function.outputNames.compactMap { outputs[$0]?.shape }
            #expect(shapes == [[1, length, 4], [1, maskLength, 8]])
            let relu = try #require(outputs[function.outputNames[1]])
            #expect(relu.scalars(of: Float.self) == maskValues.map { Swift.max($0, 0) })
        }
        // A fixed dimension must still match.
        #expect(throws: LoweringError.self) {
            try function.run([
                "tokens": MLTensor(repeating: 1, shape: [1, 3, 7]), "mask": MLTensor(repeating: 1, shape: [1, 2, 8]),
            ])
        }
    }
}
