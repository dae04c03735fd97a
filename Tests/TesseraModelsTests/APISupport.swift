import Foundation
import TesseraModels
import TesseraMultiArray
import TesseraTensor
import Testing
import _TesseraTestSupport

/// Inputs and NumPy outputs written by `tools/make_api_fixtures.py`.
struct APIExpected: Decodable {
    struct Array: Decodable {
        var shape: [Int]
        var values: [Double]

        var multiArray: MLMultiArray {
            MLMultiArray(MLShapedArray<Float>(scalars: values.map { Float($0) }, shape: shape))
        }
    }

    struct Case: Decodable {
        var inputs: [String: Array]
        var outputs: [String: Array]
        var classLabel: String?

        /// The inputs as a feature provider.
        func provider() throws -> MLDictionaryFeatureProvider {
            try MLDictionaryFeatureProvider(dictionary: inputs.mapValues { MLFeatureValue(multiArray: $0.multiArray) })
        }
    }

    static let all: [String: Case] = {
        do {
            let data = try Data(contentsOf: Fixtures.url("models/api_expected.json"))
            return try JSONDecoder().decode([String: Case].self, from: data)
        } catch {
            fatalError("[APIExpected] cannot read models/api_expected.json: \(error)")
        }
    }()
}

/// The demo's digit classifier and its held-out samples (`tools/make_demo_model.py`).
enum DigitsDemo {
    struct Sample: Decodable {
        var pixels: [Int]
        var label: String
        var probabilities: [Double]
    }

    struct Samples: Decodable {
        var labels: [String]
        var samples: [Sample]
    }

    static let resources = Fixtures.repositoryRoot.appendingPathComponent("Sources/tessera/Resources")
    static let packageURL = resources.appendingPathComponent("DigitsClassifier.mlpackage")

    static let samples: Samples = {
        do {
            let data = try Data(contentsOf: resources.appendingPathComponent("digits-samples.json"))
            return try JSONDecoder().decode(Samples.self, from: data)
        } catch {
            fatalError("[DigitsDemo] cannot read digits-samples.json: \(error)")
        }
    }()

    /// A sample's input: pixels scaled from 0–16 to 0–1, shape [1, 64].
    static func input(_ sample: Sample) throws -> MLDictionaryFeatureProvider {
        let scaled = sample.pixels.map { Float($0) / 16 }
        return try MLDictionaryFeatureProvider(dictionary: [
            "image": MLMultiArray(MLShapedArray<Float>(scalars: scaled, shape: [1, 64]))
        ])
    }
}

/// The URL of a fixture package.
func modelFixture(_ name: String) -> URL { Fixtures.url("models/\(name)") }

/// Expects `body` to throw an `MLModelError` with `code` whose message contains every fragment.
func expectModelError(
    _ code: MLModelError.Code, containing fragments: [String], sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () throws -> Void
) {
    do {
        try body()
        Issue.record("expected MLModelError(\(code)) but nothing was thrown", sourceLocation: sourceLocation)
    } catch let error as MLModelError {
        #expect(error.code == code, "\(error.message)", sourceLocation: sourceLocation)
        for fragment in fragments {
            #expect(
                error.message.contains(fragment), "\"\(error.message)\" lacks \"\(fragment)\"",
                sourceLocation: sourceLocation)
        }
    } catch {
        Issue.record("expected MLModelError(\(code)), got \(type(of: error)): \(error)", sourceLocation: sourceLocation)
    }
}
