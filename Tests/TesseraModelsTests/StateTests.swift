import Foundation
import TesseraMultiArray
import TesseraTensor
import Testing
import _TesseraTestSupport

@testable import TesseraModels

/// The accumulator of `tools/make_state_fixtures.py` (`acc += x; y = 2·acc`, fp16) and the
/// NumPy values of three successive steps from the zero state.
struct AccumulatorFixture: Decodable {
    struct Step: Decodable {
        var x: [Float]
        var y: [Float]
        var acc: [Float]
    }

    var inputs: [String]
    var outputs: [String]
    var states: [String]
    var stateShape: [Int]
    var ops: [String]
    var steps: [Step]

    static let url = Fixtures.url("state/accumulator.mlpackage")
    static let fixture: AccumulatorFixture = {
        do {
            let data = try Data(contentsOf: Fixtures.url("state/accumulator.json"))
            return try JSONDecoder().decode(AccumulatorFixture.self, from: data)
        } catch {
            preconditionFailure("[AccumulatorFixture] cannot read accumulator.json: \(error)")
        }
    }()

    static func input(_ step: Step) throws -> MLDictionaryFeatureProvider {
        let x = MLMultiArray(MLShapedArray<Float16>(scalars: step.x.map { Float16($0) }, shape: [1, 4]))
        return try MLDictionaryFeatureProvider(dictionary: ["x": MLFeatureValue(multiArray: x)])
    }

    /// The state's buffer, as floats.
    static func values(of state: MLState, _ name: String = "acc") -> [Float] {
        state.withMultiArray(for: name) { MLShapedArray<Float>(converting: $0).scalars }
    }

    /// A state shaped like the accumulator's, made without loading the model (the placeholder
    /// lowering does not run `read_state`).
    static func detachedState() throws -> MLState {
        let package = try CoreMLPackage(contentsOf: url)
        let description = try MLModelDescription(package.model, functionName: nil)
        let feature = try #require(description.stateDescriptionsByName["acc"])
        let binding = StateBinding(name: "acc", description: feature, shape: [1, 4], dataType: .float16)
        return MLState(owner: StateOwner(modelName: "accumulator.mlpackage"), bindings: [binding])
    }
}

@Suite("State: descriptions and buffers")
struct StateDescriptionTests {
    @Test("the accumulator's description lists its fp16 state apart from its inputs")
    func description() throws {
        let fixture = AccumulatorFixture.fixture
        #expect(fixture.ops.contains("read_state") && fixture.ops.contains("write_state"))
        let package = try CoreMLPackage(contentsOf: AccumulatorFixture.url)
        let description = try MLModelDescription(package.model, functionName: nil)
        #expect(Set(description.inputDescriptionsByName.keys) == Set(fixture.inputs))
        #expect(Set(description.outputDescriptionsByName.keys) == Set(fixture.outputs))
        #expect(Set(description.stateDescriptionsByName.keys) == Set(fixture.states))
        let state = try #require(description.stateDescriptionsByName["acc"])
        #expect(state.type == .state)
        #expect(state.name == "acc")
        let constraint = try #require(state.stateConstraint)
        #expect(constraint.bufferShape == fixture.stateShape)
        #expect(constraint.dataType == .float16)
        #expect(state.multiArrayConstraint == nil)
        let program = try #require(package.model.mlProgram)
        let stateInput = try #require(try program.function().inputs.first { $0.name == "acc" })
        guard case .state(let wrapped) = stateInput.type else {
            Issue.record("acc is \(stateInput.type), not a state")
            return
        }
        #expect(wrapped.tensorType?.shape == fixture.stateShape)
    }

    @Test("a stateless model's state is empty and its descriptions have no states")
    func statelessModel() throws {
        let model = try MLModel(contentsOf: modelFixture("linear_relu_softmax.mlpackage"))
        #expect(model.modelDescription.stateDescriptionsByName.isEmpty)
        let state = model.makeState()
        #expect(state.stateNames.isEmpty)
        expectModelError(.generic, containing: ["0 buffers"]) { _ = try state.withMultiArray { $0.count } }
    }

    @Test("buffers start zero-filled with the declared shape and type, and keep what withMultiArray writes")
    func buffers() throws {
        let state = try AccumulatorFixture.detachedState()
        #expect(state.stateNames == ["acc"])
        let shape = try state.withMultiArray { $0.shape.map(\.intValue) }
        #expect(shape == [1, 4])
        #expect(state.withMultiArray(for: "acc") { $0.dataType } == .float16)
        #expect(AccumulatorFixture.values(of: state) == [0, 0, 0, 0])
        state.withMultiArray(for: "acc") { acc in
            for index in 0..<4 { acc[index] = NSNumber(value: Float(index) + 0.5) }
        }
        #expect(AccumulatorFixture.values(of: state) == [0.5, 1.5, 2.5, 3.5])
    }

    @Test("one step reads the buffers as tensors and writes the updated values back (the prediction hook)")
    func hookAccumulates() async throws {
        let state = try AccumulatorFixture.detachedState()
        for step in AccumulatorFixture.fixture.steps {
            let x = MLTensor(shape: [1, 4], scalars: step.x.map { Float16($0) })
            let y = try state.withLockedTensors { current in
                let acc = try #require(current["acc"])
                #expect(ObjectIdentifier(acc.scalarType) == ObjectIdentifier(Float16.self))
                let updated = acc + x
                let y = updated * 2
                MLTensor.materialize([updated, y])
                return (y, ["acc": updated])
            }
            #expect(await y.shapedArray(of: Float16.self).scalars.map { Float($0) } == step.y)
            #expect(AccumulatorFixture.values(of: state) == step.acc)
        }
    }

    @Test("a step that throws leaves the state unchanged")
    func failedStepKeepsState() throws {
        struct Failure: Error {}
        let state = try AccumulatorFixture.detachedState()
        #expect(throws: Failure.self) {
            try state.withLockedTensors { current -> (Int, [String: MLTensor]) in
                _ = current["acc"]! + 1
                throw Failure()
            }
        }
        #expect(AccumulatorFixture.values(of: state) == [0, 0, 0, 0])
    }

    @Test("steps sharing one state are serialized: 8 concurrent increments, never two in flight")
    func serialized() async throws {
        let state = try AccumulatorFixture.detachedState()
        let inFlight = Counter()
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    DispatchQueue.global().sync {
                        state.withLockedTensors { current in
                            let running = inFlight.add(1)
                            #expect(running == 1)
                            Thread.sleep(forTimeInterval: 0.005)
                            let updated = current["acc"]! + 1
                            MLTensor.materialize([updated])
                            _ = inFlight.add(-1)
                            return ((), ["acc": updated])
                        }
                    }
                }
            }
        }
        #expect(AccumulatorFixture.values(of: state) == [8, 8, 8, 8])
    }
}

/// A thread-safe counter for the serialization test.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0

    /// Adds `delta` and returns the new value.
    func add(_ delta: Int) -> Int {
        lock.lock()
        defer { lock.unlock() }
        value += delta
        return value
    }
}

@Suite("State: binding states at load")
struct StateBindingTests {
    static func accumulator() throws -> (inputs: [(name: String, type: MILValueType)], description: MLModelDescription)
    {
        let package = try CoreMLPackage(contentsOf: AccumulatorFixture.url)
        let function = try #require(package.model.mlProgram).function()
        return (
            function.inputs.map { (name: $0.name, type: $0.type) },
            try MLModelDescription(package.model, functionName: nil)
        )
    }

    static func state(_ shape: [Int], _ dataType: MILDataType = .float16) -> MILValueType {
        .state(.tensor(MILTensorType(dataType: dataType, rank: shape.count, dimensions: shape.map { .constant($0) })))
    }

    @Test("the accumulator's state input binds to its description; ordinary inputs are skipped")
    func binds() throws {
        let (inputs, description) = try Self.accumulator()
        let bindings = try StateBinding.make(inputs: inputs, description: description, model: "accumulator")
        #expect(bindings.map(\.name) == ["acc"])
        #expect(bindings.first?.shape == [1, 4])
        #expect(bindings.first?.dataType == .float16)
        #expect(bindings.first.map { ObjectIdentifier($0.scalarType) } == ObjectIdentifier(Float16.self))
    }

    @Test("a program and a description that disagree are refused with a typed error")
    func mismatches() throws {
        let (inputs, description) = try Self.accumulator()
        let others = inputs.filter { $0.name != "acc" }
        expectModelError(.io, containing: ["shape [1, 5]", "[1, 4]"]) {
            _ = try StateBinding.make(
                inputs: others + [("acc", Self.state([1, 5]))], description: description, model: "m")
        }
        expectModelError(.io, containing: ["\"cache\" is not in the model description"]) {
            _ = try StateBinding.make(
                inputs: inputs + [("cache", Self.state([2]))], description: description, model: "m")
        }
        expectModelError(.io, containing: ["description's state \"acc\" is not an input"]) {
            _ = try StateBinding.make(inputs: others, description: description, model: "m")
        }
        let unknownShape = MILValueType.state(
            .tensor(MILTensorType(dataType: .float16, rank: 2, dimensions: [.constant(1), .unknown(variadic: false)])))
        expectModelError(.generic, containing: ["fixed shape"]) {
            _ = try StateBinding.make(inputs: others + [("acc", unknownShape)], description: description, model: "m")
        }
    }
}

@Suite("State: ownership")
struct StateOwnershipTests {
    @Test("a state from another model is refused with a typed error, before anything runs")
    func wrongModel() throws {
        let url = modelFixture("linear_relu_softmax.mlpackage")
        let first = try MLModel(contentsOf: url)
        let second = try MLModel(contentsOf: url)
        let input = try #require(APIExpected.all["linear_relu_softmax"]).provider()
        let foreign = first.makeState()
        expectModelError(.generic, containing: ["another model", "makeState()"]) {
            _ = try second.prediction(from: input, using: foreign)
        }
        let detached = try AccumulatorFixture.detachedState()
        expectModelError(.generic, containing: ["another model", "accumulator.mlpackage"]) {
            _ = try second.prediction(from: input, using: detached)
        }
    }

    @Test("the async and tensor overloads refuse a foreign state too")
    func wrongModelAsync() async throws {
        let url = modelFixture("linear_relu_softmax.mlpackage")
        let model = try MLModel(contentsOf: url)
        let foreign = try MLModel(contentsOf: url).makeState()
        let input = try #require(APIExpected.all["linear_relu_softmax"]).provider()
        await #expect(throws: MLModelError.self) { _ = try await model.prediction(from: input, using: foreign) }
        let x = MLTensor(shape: [1, 8], scalars: [Float](repeating: 1, count: 8))
        await #expect(throws: MLModelError.self) { _ = try await model.prediction(from: ["x": x], using: foreign) }
    }

    @Test("a state outlives its model: still readable, refused by any other model")
    func afterModelReleased() throws {
        let url = modelFixture("linear_relu_softmax.mlpackage")
        var model: MLModel? = try MLModel(contentsOf: url)
        let state = model!.makeState()
        weak let released = model
        model = nil
        #expect(released == nil)
        #expect(state.stateNames.isEmpty)
        let other = try MLModel(contentsOf: url)
        let input = try #require(APIExpected.all["linear_relu_softmax"]).provider()
        expectModelError(.generic, containing: ["another model"]) {
            _ = try other.prediction(from: input, using: state)
        }
    }

    @Test("a stateless model predicts the same with its empty state, sync, async and with tensors")
    func statelessWithState() async throws {
        let model = try MLModel(contentsOf: modelFixture("linear_relu_softmax.mlpackage"))
        let fixture = try #require(APIExpected.all["linear_relu_softmax"])
        let state = model.makeState()
        let expected = try #require(fixture.outputs["softmax_0"]).values.map { Float($0) }
        func values(_ output: any MLFeatureProvider) throws -> [Float] {
            MLShapedArray<Float>(try #require(output.featureValue(for: "softmax_0")?.multiArrayValue)).scalars
        }
        let plain = try values(blocking { try model.prediction(from: fixture.provider()) })
        let sync = try values(blocking { try model.prediction(from: fixture.provider(), using: state) })
        let async = try await values(model.prediction(from: fixture.provider(), using: state))
        let x = MLTensor(try #require(fixture.inputs["x"]).multiArray)
        let tensors = try await model.prediction(from: ["x": x], using: state)
        let softmax = try #require(tensors["softmax_0"])
        let tensor = await softmax.shapedArray(of: Float.self).scalars
        #expect(sync == plain)
        #expect(async == plain)
        #expect(tensor == plain)
        for (got, want) in zip(plain, expected) { #expect(abs(got - want) <= 1e-5) }
    }
}

/// The whole stateful prediction path — state tensors in as inputs, outputs named like a
/// state written back, outputs converted — with the program stood in for by the real
/// placeholder plus an accumulator written the way the lowering will write `acc`.
@Suite("State: prediction plumbing")
struct StatePlumbingTests {
    @Test("state goes in under its name and an output named like it comes back, three steps")
    func threeSteps() throws {
        let model = try MLModel(contentsOf: modelFixture("linear_relu_softmax.mlpackage"))
        let fixture = try #require(APIExpected.all["linear_relu_softmax"])
        let inputs = try model.boundInputs(fixture.provider())
        let state = try AccumulatorFixture.detachedState()
        let expected = try #require(fixture.outputs["softmax_0"]).values.map { Float($0) }
        for step in AccumulatorFixture.fixture.steps {
            let x = MLTensor(shape: [1, 4], scalars: step.x.map { Float16($0) })
            let pending = try model.runStateful(inputs, state: state) { given in
                let acc = try #require(given["acc"])
                #expect(given["x"] != nil)
                var outputs = try model.runProgram(given)
                outputs["acc"] = acc + x
                return outputs
            }
            let output = try pending.provider()
            let softmax = try #require(output.featureValue(for: "softmax_0")?.multiArrayValue)
            for (got, want) in zip(MLShapedArray<Float>(softmax).scalars, expected) { #expect(abs(got - want) <= 1e-5) }
            #expect(output.featureValue(for: "acc") == nil)
            #expect(AccumulatorFixture.values(of: state) == step.acc)
        }
    }

    @Test("a state the program does not write is unchanged; one written with the wrong shape is refused")
    func unwrittenAndWrongShape() throws {
        let model = try MLModel(contentsOf: modelFixture("linear_relu_softmax.mlpackage"))
        let inputs = try model.boundInputs(try #require(APIExpected.all["linear_relu_softmax"]).provider())
        let state = try AccumulatorFixture.detachedState()
        state.withMultiArray(for: "acc") { $0[2] = 7 }
        _ = try model.runStateful(inputs, state: state) { try model.runProgram($0) }
        #expect(AccumulatorFixture.values(of: state) == [0, 0, 7, 0])
        expectModelError(.generic, containing: ["state \"acc\" with shape [4]", "[1, 4]"]) {
            _ = try model.runStateful(inputs, state: state) { given in
                var outputs = try model.runProgram(given)
                outputs["acc"] = MLTensor(shape: [4], scalars: [Float16](repeating: 1, count: 4))
                return outputs
            }
        }
        #expect(AccumulatorFixture.values(of: state) == [0, 0, 7, 0])
    }
}

/// End-to-end stateful predictions on the coremltools accumulator, through the MIL lowering's
/// `read_state`/`write_state` (the convention at the top of
/// `Sources/TesseraModels/State/MLState.swift`).
@Suite("State: stateful predictions")
struct StatefulPredictionTests {
    @Test("three successive predictions accumulate as NumPy does")
    func accumulates() throws {
        let model = try MLModel(contentsOf: AccumulatorFixture.url)
        let state = model.makeState()
        #expect(AccumulatorFixture.values(of: state) == [0, 0, 0, 0])
        for step in AccumulatorFixture.fixture.steps {
            let output = try model.prediction(from: AccumulatorFixture.input(step), using: state)
            let y = try #require(output.featureValue(for: "y")?.multiArrayValue)
            #expect(MLShapedArray<Float>(converting: y).scalars == step.y)
            #expect(AccumulatorFixture.values(of: state) == step.acc)
        }
    }

    @Test("async and tensor predictions update the state the same way")
    func accumulatesAsync() async throws {
        let model = try await MLModel.load(contentsOf: AccumulatorFixture.url)
        let state = model.makeState()
        let steps = AccumulatorFixture.fixture.steps
        _ = try await model.prediction(from: AccumulatorFixture.input(steps[0]), using: state)
        #expect(AccumulatorFixture.values(of: state) == steps[0].acc)
        let x = MLTensor(shape: [1, 4], scalars: steps[1].x.map { Float16($0) })
        let outputs = try await model.prediction(from: ["x": x], using: state)
        let yTensor = try #require(outputs["y"])
        let y = await yTensor.shapedArray(of: Float16.self).scalars.map { Float($0) }
        #expect(y == steps[1].y)
        #expect(AccumulatorFixture.values(of: state) == steps[1].acc)
        // Two states of one model are independent.
        let fresh = model.makeState()
        _ = try await model.prediction(from: AccumulatorFixture.input(steps[0]), using: fresh)
        #expect(AccumulatorFixture.values(of: fresh) == steps[0].acc)
        #expect(AccumulatorFixture.values(of: state) == steps[1].acc)
    }

    @Test("a stateless prediction on a stateful model says to use a state")
    func statelessCallRefused() throws {
        let model = try MLModel(contentsOf: AccumulatorFixture.url)
        let step = AccumulatorFixture.fixture.steps[0]
        expectModelError(.generic, containing: ["state \"acc\"", "makeState()"]) {
            _ = try model.prediction(from: AccumulatorFixture.input(step))
        }
    }

    @Test("8 concurrent predictions on one state are serialized")
    func concurrentOnOneState() async throws {
        let model = try MLModel(contentsOf: AccumulatorFixture.url)
        let state = model.makeState()
        let ones = AccumulatorFixture.Step(x: [1, 1, 1, 1], y: [], acc: [])
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask { _ = try await model.prediction(from: AccumulatorFixture.input(ones), using: state) }
            }
            try await group.waitForAll()
        }
        #expect(AccumulatorFixture.values(of: state) == [8, 8, 8, 8])
    }
}

/// Calls the blocking overloads from an async test (there, `model.prediction(from:)`
/// resolves to the async one).
func blocking<T>(_ body: () throws -> T) rethrows -> T { try body() }
