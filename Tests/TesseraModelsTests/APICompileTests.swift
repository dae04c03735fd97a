import Foundation
import TesseraModels
import TesseraMultiArray
import TesseraTensor
import Testing

@Suite("API: compileModel and loading")
struct APICompileTests {
    @Test("compile, move to a permanent place, load: the usual caching pattern")
    func roundTrip() throws {
        let scratch = try TemporaryDirectory()
        let compiled = try MLModel.compileModel(at: DigitsDemo.packageURL)
        #expect(compiled.lastPathComponent == "DigitsClassifier.mlmodelc")
        let permanent = scratch.url.appendingPathComponent(compiled.lastPathComponent)
        try FileManager.default.moveItem(at: compiled, to: permanent)
        let model = try MLModel(contentsOf: permanent)
        let sample = DigitsDemo.samples.samples[5]
        let output = try model.prediction(from: DigitsDemo.input(sample))
        #expect(output.featureValue(for: "classLabel")?.stringValue == sample.label)
    }

    @Test("async compile and async load")
    func asyncRoundTrip() async throws {
        let compiled = try await MLModel.compileModel(at: modelFixture("classifier.mlpackage"))
        defer { try? FileManager.default.removeItem(at: compiled.deletingLastPathComponent()) }
        let model = try await MLModel.load(contentsOf: compiled, configuration: MLModelConfiguration())
        #expect(model.modelDescription.classLabels as? [String] == ["cat", "dog", "bird"])
    }

    @Test("an .mlmodel NeuralNetwork compiles, and the compiled model loads and predicts")
    func mlmodelFile() throws {
        let compiled = try MLModel.compileModel(at: modelFixture("neural_network.mlmodel"))
        defer { try? FileManager.default.removeItem(at: compiled.deletingLastPathComponent()) }
        #expect(FileManager.default.fileExists(atPath: compiled.appendingPathComponent("model.tessera").path))
        let model = try MLModel(contentsOf: compiled)
        let x = MLMultiArray(MLShapedArray<Double>(scalars: [-2, -0.5, 0.5, 3], shape: [4]))
        let output = try model.prediction(from: try MLDictionaryFeatureProvider(dictionary: ["x": x]))
        let y = try #require(output.featureValue(for: "y")?.multiArrayValue)
        // The fixture's one layer is a ReLU (tools/make_model_fixtures.py).
        #expect(MLShapedArray<Double>(y).scalars == [0, 0, 0.5, 3])
    }

    @Test("a missing model throws .io")
    func missing() {
        let url = URL(fileURLWithPath: "/nonexistent/Model.mlpackage")
        expectModelError(.io, containing: ["Model.mlpackage"]) { _ = try MLModel.compileModel(at: url) }
        expectModelError(.io, containing: ["Model.mlpackage"]) { _ = try MLModel(contentsOf: url) }
    }

    @Test("a truncated weight file throws .io at load")
    func truncatedWeights() throws {
        let scratch = try TemporaryDirectory()
        let package = try scratch.copy(DigitsDemo.packageURL)
        let weights = package.appendingPathComponent("Data/com.apple.CoreML/weights/weight.bin")
        let data = try Data(contentsOf: weights)
        try data.prefix(data.count / 2).write(to: weights)
        expectModelError(.io, containing: ["weight.bin"]) { _ = try MLModel(contentsOf: package) }
        expectModelError(.io, containing: ["weight.bin"]) { _ = try MLModel.compileModel(at: package) }
    }

    @Test("an Apple-compiled .mlmodelc and a compiled directory of another version are rejected")
    func foreignCompiled() throws {
        let scratch = try TemporaryDirectory()
        let apple = scratch.url.appendingPathComponent("Apple.mlmodelc")
        try FileManager.default.createDirectory(at: apple, withIntermediateDirectories: true)
        expectModelError(.io, containing: ["Apple.mlmodelc", "compileModel"]) { _ = try MLModel(contentsOf: apple) }

        // A directory in compiled format 1 (a package copy and a JSON marker).
        let moved = scratch.url.appendingPathComponent("Old.mlmodelc")
        try FileManager.default.createDirectory(at: moved, withIntermediateDirectories: true)
        let marker = moved.appendingPathComponent("tessera-compiled-model.json")
        try Data(#"{"format": "tessera-compiled-model", "version": 1}"#.utf8).write(to: marker)
        expectModelError(.io, containing: ["version 1", "recompile"]) { _ = try MLModel(contentsOf: moved) }
    }
}

@Suite("API: completion handlers and cancellation")
struct APICompletionHandlerTests {
    @Test("compile and load with completion handlers")
    func completionHandlers() async throws {
        let compiled: URL = try await handOff { MLModel.compileModel(at: DigitsDemo.packageURL, completionHandler: $0) }
        defer { try? FileManager.default.removeItem(at: compiled.deletingLastPathComponent()) }
        let model: MLModel = try await handOff { MLModel.load(contentsOf: compiled, completionHandler: $0) }
        #expect(model.modelDescription.predictedFeatureName == "classLabel")
        let failure: Result<MLModel, any Error> = await withCheckedContinuation { continuation in
            MLModel.load(contentsOf: URL(fileURLWithPath: "/nonexistent.mlpackage")) {
                continuation.resume(returning: $0)
            }
        }
        #expect(throws: MLModelError.self) { try failure.get() }
    }

    @Test("a cancelled task's prediction throws .predictionCancelled")
    func cancellation() async throws {
        let model = try MLModel(contentsOf: DigitsDemo.packageURL)
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await model.prediction(from: DigitsDemo.input(DigitsDemo.samples.samples[0]))
                .featureValue(for: "classLabel")?.stringValue
        }
        do {
            _ = try await task.value
            Issue.record("expected a cancellation error")
        } catch let error as MLModelError {
            #expect(error.code == .predictionCancelled)
        }
    }
}

/// A completion handler's result, handed to the waiting task under a lock ThreadSanitizer sees
/// (it cannot see a continuation's hand-off, so reading the model after one is reported).
private func handOff<T: Sendable>(
    _ start: (@escaping @Sendable (Result<T, any Error>) -> Void) -> Void
) async throws -> T {
    let box = HandOffBox<T>()
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        start { result in
            box.lock.withLock { box.result = result }
            continuation.resume()
        }
    }
    return try box.lock.withLock { box.result! }.get()
}

/// ``handOff(_:)``'s result, written once by the handler and read once by the task.
private final class HandOffBox<T: Sendable>: @unchecked Sendable {
    let lock = NSLock()
    var result: Result<T, any Error>?
}
