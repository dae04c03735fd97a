import Foundation
import TesseraModels
import TesseraMultiArray
import TesseraTensor
import Testing
import _TesseraTestSupport

/// One `MLModel` shared by many tasks. Weights and plans are shared;
/// each prediction has its own graph and activations, so concurrent results must equal
/// serial ones exactly (same kernels, same plan, same inputs).
@Suite("Concurrency: one model, many tasks")
struct ConcurrentPredictionTests {
    /// The fixtures the placeholder lowering runs, with their input names and outputs to compare.
    static let models = ["linear_relu_softmax", "classifier", "flexible_shapes", "int_classifier"]

    /// Per task, a different input: the fixture's input scaled by `1 + task / 8`.
    static func inputs(_ name: String, task: Int) throws -> MLDictionaryFeatureProvider {
        let fixture = try #require(APIExpected.all[name])
        var features: [String: MLFeatureValue] = [:]
        for (input, array) in fixture.inputs {
            let scale = 1 + Float(task) / 8
            let values = array.values.map { Float($0) * scale }
            features[input] = MLFeatureValue(
                multiArray: MLMultiArray(MLShapedArray<Float>(scalars: values, shape: array.shape)))
        }
        return try MLDictionaryFeatureProvider(dictionary: features)
    }

    /// Every output as comparable values: multi-arrays as floats, labels and dictionaries as strings.
    static func snapshot(_ output: any MLFeatureProvider) -> [String: [String]] {
        var result: [String: [String]] = [:]
        for name in output.featureNames {
            guard let value = output.featureValue(for: name) else { continue }
            switch value.type {
            case .multiArray:
                result[name] = MLShapedArray<Float>(converting: value.multiArrayValue!).scalars.map { "\($0)" }
            case .dictionary:
                result[name] = value.dictionaryValue.map { "\($0.key)=\($0.value.doubleValue)" }.sorted()
            case .string: result[name] = [value.stringValue]
            case .int64: result[name] = ["\(value.int64Value)"]
            default: result[name] = ["\(value.type)"]
            }
        }
        return result
    }

    @Test("8 tasks predicting concurrently get the serial results", arguments: models)
    func eightTasks(_ name: String) async throws {
        let model = try MLModel(contentsOf: modelFixture("\(name).mlpackage"))
        var serial: [[String: [String]]] = []
        for task in 0..<8 {
            serial.append(Self.snapshot(try blocking { try model.prediction(from: Self.inputs(name, task: task)) }))
        }
        let concurrent = try await withThrowingTaskGroup(of: (Int, [String: [String]]).self) { group in
            for round in 0..<3 {
                for task in 0..<8 {
                    group.addTask {
                        // Mix the async and the blocking entry points.
                        let input = try Self.inputs(name, task: task)
                        let output =
                            (task + round).isMultiple(of: 2)
                            ? try await model.prediction(from: input)
                            : try blocking { try model.prediction(from: input) }
                        return (task, Self.snapshot(output))
                    }
                }
            }
            var results: [(Int, [String: [String]])] = []
            for try await result in group { results.append(result) }
            return results
        }
        #expect(concurrent.count == 24)
        for (task, snapshot) in concurrent { #expect(snapshot == serial[task], "\(name) task \(task)") }
    }

    @Test("8 threads predicting synchronously at once get the serial results")
    func eightThreads() throws {
        let name = "linear_relu_softmax"
        let model = try MLModel(contentsOf: modelFixture("\(name).mlpackage"))
        let serial = try (0..<8).map { Self.snapshot(try model.prediction(from: Self.inputs(name, task: $0))) }
        let results = Results(count: 8)
        DispatchQueue.concurrentPerform(iterations: 8) { task in
            results.set(task, Result { Self.snapshot(try model.prediction(from: Self.inputs(name, task: task))) })
        }
        for task in 0..<8 { #expect(try results.get(task) == serial[task]) }
    }

    @Test("8 tasks using the tensor API and their own states concurrently get the serial results")
    func eightTasksTensorsAndStates() async throws {
        let model = try MLModel(contentsOf: modelFixture("linear_relu_softmax.mlpackage"))
        let base = try #require(APIExpected.all["linear_relu_softmax"]?.inputs["x"]).values.map { Float($0) }
        func x(_ task: Int) -> MLTensor { MLTensor(shape: [1, 8], scalars: base.map { $0 * Float(task + 1) }) }
        var serial: [[Float]] = []
        for task in 0..<8 {
            let outputs = try await model.prediction(from: ["x": x(task)])
            serial.append(await outputs["softmax_0"]!.shapedArray(of: Float.self).scalars)
        }
        let concurrent = try await withThrowingTaskGroup(of: (Int, [Float]).self) { group in
            for task in 0..<8 {
                group.addTask {
                    let outputs = try await model.prediction(from: ["x": x(task)], using: model.makeState())
                    return (task, await outputs["softmax_0"]!.shapedArray(of: Float.self).scalars)
                }
            }
            var results: [(Int, [Float])] = []
            for try await result in group { results.append(result) }
            return results
        }
        for (task, values) in concurrent { #expect(values == serial[task]) }
    }
}

/// Results written by concurrent threads, one slot each.
final class Results: @unchecked Sendable {
    private let lock = NSLock()
    private var slots: [Result<[String: [String]], any Error>?]

    init(count: Int) { slots = Array(repeating: nil, count: count) }

    func set(_ index: Int, _ result: Result<[String: [String]], any Error>) {
        lock.lock()
        defer { lock.unlock() }
        slots[index] = result
    }

    func get(_ index: Int) throws -> [String: [String]] {
        lock.lock()
        defer { lock.unlock() }
        return try slots[index]!.get()
    }
}
