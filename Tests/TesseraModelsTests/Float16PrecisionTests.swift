import Foundation
import TesseraModels
import TesseraMultiArray
import TesseraTensor
import Testing
import _TesseraTestSupport

/// `MLModelConfiguration.float16Precision` (a Tessera extension) on the `mil-ops`
/// `float16_rounding` program (`tools/make_mil_op_fixtures.py`: fp32 input, ops in fp16,
/// NumPy's float16 arithmetic as the rounded reference and its float32 arithmetic as the other).
@Suite("MLModelConfiguration.float16Precision")
struct Float16PrecisionTests {
    static let folder = "mil-ops/float16_rounding"

    func predict(_ precision: MLFloat16Precision?) throws -> [Float] {
        let configuration = MLModelConfiguration()
        if let precision { configuration.float16Precision = precision }
        let model = try MLModel(
            contentsOf: Fixtures.url("\(Self.folder)/model.mlpackage"), configuration: configuration)
        let x = try Fixtures.npy("\(Self.folder)/x.npy")
        let input = try MLDictionaryFeatureProvider(dictionary: [
            "x": MLFeatureValue(multiArray: MLMultiArray(MLShapedArray<Float>(scalars: x.floats, shape: x.shape)))
        ])
        let output = try #require(try model.prediction(from: input).featureValue(for: "cast_1")?.multiArrayValue)
        return MLShapedArray<Float>(output).scalars
    }

    @Test("the default computes fp16 values in Float32")
    func defaultIsFloat32() throws {
        #expect(MLModelConfiguration().float16Precision == .float32)
        let reference = try Fixtures.npy("\(Self.folder)/expected_fp32.npy").floats
        let got = try predict(nil)
        #expect(zip(got, reference).allSatisfy { Swift.abs($0 - $1) <= 1e-3 + 1e-5 * Swift.abs($1) })
        #expect(try predict(.float32) == got)
    }

    @Test(".float16 rounds every fp16 value as NumPy's float16 arithmetic does, bit for bit")
    func float16RoundsLikeNumPy() throws {
        let reference = try Fixtures.npy("\(Self.folder)/expected_0.npy").floats
        let got = try predict(.float16)
        #expect(got == reference)
        #expect(got != (try predict(.float32)))
    }

    @Test("a model keeps the precision it was loaded with")
    func snapshot() throws {
        let configuration = MLModelConfiguration()
        configuration.float16Precision = .float16
        let model = try MLModel(
            contentsOf: Fixtures.url("\(Self.folder)/model.mlpackage"), configuration: configuration)
        configuration.float16Precision = .float32
        #expect(model.configuration.float16Precision == .float16)
    }
}
