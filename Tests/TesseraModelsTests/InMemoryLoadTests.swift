import Foundation
import TesseraMultiArray
import TesseraTensor
import Testing
import _TesseraTestSupport

@testable import TesseraModels

/// Loading from bytes in memory (`MLModel(modelData:weightFiles:name:)`,
/// `MLModel(compiledData:name:)`), the path the `package` and `compiled` fuzz targets take.
@Suite("Loading from bytes in memory")
struct InMemoryLoadTests {
    static func packageFile(_ name: String, _ file: String) throws -> Data {
        try Data(contentsOf: modelFixture("\(name).mlpackage").appendingPathComponent("Data/com.apple.CoreML/\(file)"))
    }

    /// Every output of the fixture's prediction against coremltools' (`models/api_expected.json`).
    static func expectMatchesReference(_ model: MLModel, _ name: String) throws {
        let reference = try #require(APIExpected.all[name])
        let result = try model.prediction(from: try reference.provider())
        for (output, expected) in reference.outputs {
            let got = try #require(result.featureValue(for: output)?.multiArrayValue, "\(output)")
            #expect(got.shape.map(\.intValue) == expected.shape)
            #expect(got.count == expected.values.count)
            for (g, e) in zip(MLShapedArray<Float>(got).scalars, expected.values) {
                #expect(abs(Double(g) - e) <= 1e-5 + 1e-4 * abs(e), "\(output)")
            }
        }
    }

    @Test(
        "a package's bytes load and predict as coremltools does", arguments: ["linear_relu_softmax", "flexible_shapes"])
    func package(_ name: String) throws {
        let model = try MLModel(
            modelData: try Self.packageFile(name, "model.mlmodel"),
            weightFiles: ["weight.bin": try Self.packageFile(name, "weights/weight.bin")], name: "\(name).mlpackage")
        try Self.expectMatchesReference(model, name)
    }

    @Test("a compiled model's bytes load and predict as coremltools does")
    func compiled() throws {
        let url = try MLModel.compileModel(at: modelFixture("linear_relu_softmax.mlpackage"))
        defer { try? FileManager.default.removeItem(at: url) }
        let bytes = try Data(contentsOf: url.appendingPathComponent(CompiledModelHeader.fileName))
        let model = try MLModel(compiledData: bytes, name: "linear_relu_softmax.mlmodelc")
        try Self.expectMatchesReference(model, "linear_relu_softmax")
    }

    @Test("missing weights, a damaged spec and damaged compiled bytes throw MLModelError .io naming the model")
    func damaged() throws {
        let spec = try Self.packageFile("linear_relu_softmax", "model.mlmodel")
        for (weights, fragment) in [
            ([String: Data](), "weights/weight.bin"), (["weight.bin": Data([1, 2])], "64-byte"),
        ] {
            let error = #expect(throws: MLModelError.self) {
                _ = try MLModel(modelData: spec, weightFiles: weights, name: "m.mlpackage")
            }
            #expect(error?.code == .io)
            #expect(error?.message.contains("m.mlpackage") == true)
            #expect(error?.message.contains(fragment) == true, "\(String(describing: error))")
        }
        #expect(throws: MLModelError.self) {
            _ = try MLModel(modelData: spec.prefix(spec.count / 2), weightFiles: [:], name: "m.mlpackage")
        }
        let url = try MLModel.compileModel(at: modelFixture("linear_relu_softmax.mlpackage"))
        defer { try? FileManager.default.removeItem(at: url) }
        var bytes = try Data(contentsOf: url.appendingPathComponent(CompiledModelHeader.fileName))
        bytes[bytes.count / 2] ^= 0x40
        let error = #expect(throws: MLModelError.self) { _ = try MLModel(compiledData: bytes, name: "m.mlmodelc") }
        #expect(error?.code == .io)
        #expect(error?.message.contains("checksum") == true, "\(String(describing: error))")
        #expect(throws: MLModelError.self) { _ = try MLModel(compiledData: Data(), name: "m.mlmodelc") }
    }
}
