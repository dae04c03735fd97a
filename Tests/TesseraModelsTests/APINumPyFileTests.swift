import Foundation
import TesseraModels
import TesseraMultiArray
import TesseraTensor
import Testing

@Suite("API: the .npy reader and writer of tessera predict")
struct APINumPyFileTests {
    @Test("reads files NumPy wrote")
    func readsNumPy() throws {
        let x = try NumPyFile.read(modelFixture("api_x.npy"))
        #expect(x.dataType == .float32 && x.shape == [1, 8])
        let expected = try #require(APIExpected.all["linear_relu_softmax"]?.inputs["x"]).values
        #expect(MLShapedArray<Float>(x).scalars == expected.map { Float($0) })

        let integers = try NumPyFile.read(modelFixture("api_int64.npy"))
        #expect(integers.dataType == .int32 && integers.shape == [2, 3])
        #expect(MLShapedArray<Int32>(integers).scalars == [-2, -1, 0, 1, 2, 3])
    }

    @Test("what it writes reads back", arguments: [MLMultiArrayDataType.float32, .double, .float16, .int32, .int8])
    func roundTrip(_ dataType: MLMultiArrayDataType) throws {
        let source = MLMultiArray(MLShapedArray<Float>(scalars: [1, -2, 3, 4, 5, 6], shape: [3, 2]))
        let converted = try MLMultiArray(shape: [3, 2], dataType: dataType)
        source.transfer(to: converted)
        let data = NumPyFile.encode(converted)
        #expect((data.count - converted.count * dataType.byteCount) % 64 == 0, "the data starts 64-byte aligned")
        let back = try NumPyFile.decode(data)
        #expect(back.dataType == dataType && back.shape == [3, 2])
        #expect(MLShapedArray<Float>(converting: back).scalars == [1, -2, 3, 4, 5, 6])
    }

    @Test("a prediction from a NumPy file matches NumPy's output")
    func predictFromFile() throws {
        let model = try MLModel(contentsOf: modelFixture("linear_relu_softmax.mlpackage"))
        let input = try MLDictionaryFeatureProvider(dictionary: ["x": try NumPyFile.read(modelFixture("api_x.npy"))])
        let output = try #require(model.prediction(from: input).featureValue(for: "softmax_0")?.multiArrayValue)
        let expected = try #require(APIExpected.all["linear_relu_softmax"]?.outputs["softmax_0"]).values
        for (g, e) in zip(MLShapedArray<Float>(output).scalars, expected) {
            #expect(abs(Double(g) - e) <= 1e-5 + 1e-4 * e)
        }
    }

    @Test(
        "malformed files throw with the file's name",
        arguments: [
            Data([1, 2, 3]), Data([0x93, 0x4E, 0x55, 0x4D, 0x50, 0x59, 9, 0, 0, 0]),
            Data([0x93, 0x4E, 0x55, 0x4D, 0x50, 0x59, 1, 0, 200, 0]) + Data("{'descr'".utf8),
        ])
    func malformed(_ data: Data) {
        #expect(throws: NumPyFileError.self) { _ = try NumPyFile.decode(data, name: "bad.npy") }
    }

    @Test("a truncated payload throws")
    func truncated() throws {
        let data = try Data(contentsOf: modelFixture("api_x.npy"))
        #expect(throws: NumPyFileError.self) { _ = try NumPyFile.decode(data.dropLast(4), name: "x.npy") }
    }
}
