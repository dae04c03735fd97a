import Foundation
import Testing
import _TesseraTestSupport

/// What `tools/make_model_fixtures.py` recorded about a package, read back by coremltools.
struct ModelFixture: Decodable, CustomTestStringConvertible {
    struct Feature: Decodable {
        var name: String
        var kind: String
        var isOptional: Bool
        var shortDescription: String?
        var shape: [Int]?
        var dataType: String?
        var enumeratedShapes: [[Int]]?
        var shapeRange: [[Int]]?
        var keyType: String?
    }

    struct Metadata: Decodable {
        var author: String
        var license: String
        var shortDescription: String
        var versionString: String
        var userDefined: [String: String]
    }

    struct FunctionInput: Decodable {
        var name: String
        var dataType: String
        var rank: Int
    }

    struct Value: Decodable {
        var kind: String
        var dataType: String
        var shape: [Int]
        var fileName: String?
        var offset: UInt64?
        var field: String?
        var values: [Scalar]?
        var byteCount: Int?
    }

    enum Scalar: Decodable, Equatable {
        case number(Double)
        case bool(Bool)
        case string(String)

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let value = try? container.decode(Bool.self) {
                self = .bool(value)
            } else if let value = try? container.decode(Double.self) {
                self = .number(value)
            } else {
                self = .string(try container.decode(String.self))
            }
        }
    }

    struct Operation: Decodable {
        var type: String
        var outputs: [String]
        var inputs: [String: [String]]
        var attributes: [String: Value]?
    }

    struct Program: Decodable {
        var version: Int64
        var functions: [String]
        var opset: String
        var functionInputs: [FunctionInput]
        var blockOutputs: [String]
        var operations: [Operation]
    }

    struct Blob: Decodable {
        var metadataOffset: UInt64
        var dataType: String
        var sizeInBytes: Int
        var dataOffset: Int
        var paddingBits: Int
    }

    struct WeightFileSummary: Decodable {
        var count: Int
        var version: Int
        var fileSize: Int
        var blobs: [Blob]
    }

    struct WeightValues: Decodable {
        var metadataOffset: UInt64
        var count: Int
        var first: [Double]
        var last: [Double]
    }

    var name = ""
    var specificationVersion: Int32
    var modelType: String
    var inputs: [Feature]
    var outputs: [Feature]
    var predictedFeatureName: String
    var predictedProbabilitiesName: String
    var metadata: Metadata
    var program: Program
    var weightFile: WeightFileSummary?
    var weightValues: [String: WeightValues]?

    enum CodingKeys: String, CodingKey {
        case specificationVersion, modelType, inputs, outputs, predictedFeatureName, predictedProbabilitiesName
        case metadata, program, weightFile, weightValues
    }

    /// The package's URL.
    var packageURL: URL { Fixtures.url("models/\(name).mlpackage") }

    var testDescription: String { name }

    /// Every package fixture with its summary.
    static let all: [ModelFixture] = [
        "linear_relu_softmax", "conv_fp32", "conv_fp16", "flexible_shapes", "classifier", "quantized",
    ].map(load)

    static func load(_ name: String) -> ModelFixture {
        do {
            let data = try Data(contentsOf: Fixtures.url("models/\(name).json"))
            var fixture = try JSONDecoder().decode(ModelFixture.self, from: data)
            fixture.name = name
            return fixture
        } catch {
            fatalError("[ModelFixture] cannot read models/\(name).json: \(error)")
        }
    }
}

/// A scratch directory removed when the value is released.
final class TemporaryDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-models-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// Copies a fixture package here and returns the copy's URL.
    func copy(_ source: URL) throws -> URL {
        let destination = url.appendingPathComponent(source.lastPathComponent)
        try FileManager.default.copyItem(at: source, to: destination)
        return destination
    }

    deinit { try? FileManager.default.removeItem(at: url) }
}
