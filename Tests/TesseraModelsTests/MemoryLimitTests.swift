import Foundation
import TesseraKernels
import TesseraMultiArray
import TesseraTensor
import Testing
import _TesseraTestSupport

@testable import TesseraModels

/// `MLModelConfiguration.memoryLimit` and `TESSERA_MEMORY_LIMIT`: a prediction whose plan needs
/// more throws before computing anything, and the model predicts other inputs afterwards.
///
/// The model is `reliability/outer_product.mlpackage`: `y = relu(xᵀ · x) + 1`, `x` of shape
/// `[1, N]` (N up to a million), so N = 4096 asks for 64 MiB per result from a 16 KiB input.
@Suite("Memory limit")
struct MemoryLimitTests {
    struct Expected: Decodable {
        var x: [Float]
        var shape: [Int]
        var y: [Float]
        var yShape: [Int]
    }

    static let packageURL = Fixtures.url("reliability/outer_product.mlpackage")

    static func expected() throws -> Expected {
        try JSONDecoder().decode(Expected.self, from: Data(contentsOf: Fixtures.url("reliability/outer_product.json")))
    }

    static func input(_ values: [Float]) -> MLDictionaryFeatureProvider {
        let array = MLMultiArray(MLShapedArray<Float>(scalars: values, shape: [1, values.count]))
        return MLDictionaryFeatureProvider(features: ["x": MLFeatureValue(multiArray: array)])
    }

    static func output(_ provider: any MLFeatureProvider) throws -> MLShapedArray<Float> {
        MLShapedArray<Float>(converting: try #require(provider.featureValue(for: "y")?.multiArrayValue))
    }

    static func model(memoryLimit: Int?) throws -> MLModel {
        let configuration = MLModelConfiguration()
        configuration.memoryLimit = memoryLimit
        return try MLModel(contentsOf: packageURL, configuration: configuration)
    }

    @Test("a huge flexible-shape request is refused with .generic; a normal one after it matches NumPy")
    func hugeRequestRefused() throws {
        let model = try Self.model(memoryLimit: 16 << 20)
        let expected = try Self.expected()
        let huge = Self.input([Float](repeating: 0.5, count: 4096))
        #expect {
            try model.prediction(from: huge)
        } throws: { error in
            guard let error = error as? MLModelError, error.code == .generic else { return false }
            // Two [4096, 4096] results alive at once: the product, and relu(·) + 1 computed from it.
            return error.message.contains("needs 128.0 MiB for its results at once")
                && error.message.contains("more than the model's memory limit of 16.0 MiB")
                && error.message.contains("MLModelConfiguration.memoryLimit")
                && error.message.contains("outer_product.mlpackage")
        }
        let output = try Self.output(try model.prediction(from: Self.input(expected.x)))
        #expect(output.shape == expected.yShape)
        #expect(output.scalars == expected.y)
        #expect(throws: MLModelError.self) { try model.prediction(from: huge) }
    }

    @Test("the async, batch and tensor predictions are refused the same way")
    func otherEntryPointsRefused() async throws {
        let model = try Self.model(memoryLimit: 16 << 20)
        let huge = Self.input([Float](repeating: 0.5, count: 4096))
        await #expect(throws: MLModelError.self) {
            try await model.prediction(from: Self.input([Float](repeating: 0.5, count: 4096)))
        }
        #expect(throws: MLModelError.self) {
            try model.predictions(fromBatch: MLArrayBatchProvider(array: [huge, huge]))
        }
        let tensor = MLTensor(repeating: 0.5, shape: [1, 4096])
        await #expect(throws: MLModelError.self) { try await model.prediction(from: ["x": tensor]) }
        let expected = try Self.expected()
        let output = try Self.output(try await model.prediction(from: Self.input(expected.x)))
        #expect(output.scalars == expected.y)
    }

    @Test("a request within the limit is computed")
    func withinLimit() throws {
        // N = 512: 1 MiB per [512, 512] result, well under 16 MiB.
        let model = try Self.model(memoryLimit: 16 << 20)
        let x = (0..<512).map { Float($0 % 7) - 3 }
        let output = try Self.output(try model.prediction(from: Self.input(x)))
        #expect(output.shape == [512, 512])
        let row = 5
        let expectedRow = x.map { Swift.max(x[row] * $0, 0) + 1 }
        #expect(Array(output.scalars[(row * 512)..<(row * 512 + 512)]) == expectedRow)
    }

    @Test("TESSERA_MEMORY_LIMIT sets the process-wide limit, and a refused prediction says so")
    func environmentVariable() async {
        await #expect(processExitsWith: .success) {
            setenv(BufferPool.memoryLimitVariable, "8M", 1)
            guard BufferPool.shared.memoryLimit == 8 << 20,
                let model = try? MLModel(contentsOf: MemoryLimitTests.packageURL)
            else { exit(2) }
            do {
                _ = try model.prediction(from: MemoryLimitTests.input([Float](repeating: 1, count: 2048)))
                exit(3)
            } catch let error as MLModelError {
                guard error.message.contains("TESSERA_MEMORY_LIMIT") else { exit(4) }
            } catch {
                exit(5)
            }
            guard let output = try? model.prediction(from: MemoryLimitTests.input([2, 3])),
                MLShapedArray<Float>(converting: output.featureValue(for: "y")!.multiArrayValue!).scalars == [
                    5, 7, 7, 10,
                ]
            else { exit(6) }
        }
    }
}
