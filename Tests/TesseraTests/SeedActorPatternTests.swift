import Tessera
import Testing

/// The model-store actor that Core ML apps write: it keeps a configuration and the loaded
/// models, and predicts with providers it holds. Compiled in the Swift 6 language mode, this is
/// what used to fail with "sending … risks causing data races".
actor ModelStore {
    let configuration = MLModelConfiguration()
    private var models: [URL: MLModel] = [:]
    private var lastInput: (any MLFeatureProvider)?

    init() {
        configuration.computeUnits = .cpuOnly
    }

    func model(at url: URL) async throws -> MLModel {
        if let model = models[url] { return model }
        let model = try await MLModel.load(contentsOf: url, configuration: configuration)
        models[url] = model
        return model
    }

    func predict(_ input: any MLFeatureProvider, at url: URL) async throws -> String {
        lastInput = input
        let model = try await model(at: url)
        return try await model.prediction(from: input).featureValue(for: "classLabel")?.stringValue ?? ""
    }

    func repeatLast(at url: URL) async throws -> String? {
        guard let lastInput else { return nil }
        let model = try await model(at: url)
        let output = try await model.prediction(from: lastInput, options: MLPredictionOptions())
        return output.featureValue(for: "classLabel")?.stringValue
    }

    func label(for input: any MLFeatureProvider, at url: URL) async throws -> String {
        let model = try await model(at: url)
        let output = try await model.prediction(from: input)
        _ = input.featureNames
        return output.featureValue(for: "classLabel")?.stringValue ?? ""
    }
}

/// The digits demo model shipped with the `tessera` tool.
let digitsPackage = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("Sources/tessera/Resources/DigitsClassifier.mlpackage")

@Suite("import Tessera: actor-based model code compiles in Swift 6 mode")
struct SeedActorPatternTests {
    @Test("a model store actor loads with its own configuration and predicts with held providers")
    func modelStore() async throws {
        let store = ModelStore()
        let label = try await store.predict(digitInput(), at: digitsPackage)
        #expect(Int(label).map { (0...9).contains($0) } == true)
        #expect(try await store.repeatLast(at: digitsPackage) == label)
        #expect(try await store.label(for: digitInput(), at: digitsPackage) == label)
    }

    /// A vertical stroke, as the digits model's 8 × 8 input.
    func digitInput() throws -> MLDictionaryFeatureProvider {
        let pixels = try MLMultiArray(shape: [1, 64], dataType: .float32)
        for index in 0..<64 { pixels[index] = NSNumber(value: Float(index % 8 == 3 ? 16 : 0)) }
        return try MLDictionaryFeatureProvider(dictionary: ["image": MLFeatureValue(multiArray: pixels)])
    }
}
