import Foundation
import TesseraTensor
import Testing
import _TesseraTestSupport

@testable import TesseraModels

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
