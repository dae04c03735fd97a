// How state reaches the lowered program — the contract between this folder and Lowering/.
//
// A stateful ML program (iOS 18, opset CoreML8) declares each state as a function input of
// type `state<tensor<fp16, shape>>` (`MILValueType.state`), reads it with
// `read_state(input: s)` and writes it with `write_state(input: s, data: v)` (coremltools
// serializes its `coreml_update_state(state: s, value: v)` as `write_state` followed by a
// `read_state`). `MLState` owns one buffer per state. A stateful prediction:
//
// 1. takes the state's lock (one prediction per state at a time; see ``MLState``);
// 2. passes the current buffers to `LoweredFunction.run(_:)` **as extra inputs under the
//    state's name** (`inputs["acc"]`: an `MLTensor` of the state's declared scalar type and
//    shape), next to the ordinary inputs;
// 3. reads **outputs named like a state** (`outputs["acc"]`) as that state's updated
//    value; a state the program did not write is left unchanged;
// 4. materializes the model outputs and updated states in one plan and copies each updated
//    state into its buffer (converted to the declared data type) before the lock is released.
//
// So the lowering implements the state ops as: `read_state(s)` → the current value of `s`
// (initially `inputs[s]`); `write_state(s, v)` / `coreml_update_state(s, v)` → the current
// value of `s` becomes `v` (later `read_state`s see `v`, `coreml_update_state` also yields
// `v`), and `outputs[s] = v` when the function returns. A stateless prediction on a stateful
// model passes no state inputs; `MLModel.runProgram` refuses it with a clear error first.

import Foundation
import TesseraMultiArray
import TesseraTensor

/// The state buffers of a stateful model — for example a transformer's key-value cache —
/// that persist across predictions: Core ML's `MLState`.
///
/// Make one with ``MLModel/makeState()``; pass it to every prediction of one sequence:
///
/// ```swift
/// let state = model.makeState()
/// for token in tokens {
///     let output = try await model.prediction(from: input(token), using: state)
///     …
/// }
/// state.withMultiArray(for: "keyCache") { cache in print(cache.shape) }
/// ```
///
/// Buffers start zero-filled, with the shape and data type of the model's
/// ``MLModelDescription/stateDescriptionsByName``. A stateless model's state is empty and
/// works with the stateful prediction methods.
///
/// ## Threads
///
/// `MLState` is `Sendable`. Predictions that share one state are **serialized**: a
/// prediction holds the state's lock from reading the buffers until the updated values are
/// written back, so a second prediction (or a ``withMultiArray(for:_:)``) on the same state
/// waits for the first to finish; predictions on different states run concurrently. The
/// asynchronous prediction methods wait on a Dispatch worker, never on a thread of Swift's
/// cooperative pool. (Core ML asks callers to serialize; Tessera does it for them.)
///
/// ## Lifetime
///
/// A state belongs to the model that made it: using it with any other model — even another
/// load of the same file — throws ``MLModelError`` (`.generic`). The state owns its
/// buffers, so it stays readable with ``withMultiArray(for:_:)`` after its model is
/// released; it simply can no longer be used for a prediction.
public final class MLState: @unchecked Sendable {
    // `@unchecked`: `buffers` and the multi-arrays in it are read and written only while
    // `lock` is held (predictions, `withMultiArray`), which serializes all access.

    /// Identifies the model that made the state.
    let owner: StateOwner
    /// The states in the model's order, with their descriptions.
    let bindings: [StateBinding]
    /// One contiguous buffer per state, of the declared shape and data type.
    private var buffers: [String: MLMultiArray]
    /// Held for the whole of a prediction and of a `withMultiArray` body. Recursive, so a
    /// synchronous prediction inside a `withMultiArray` body on the same thread cannot deadlock.
    private let lock = NSRecursiveLock()

    /// Zero-filled buffers for `bindings`.
    init(owner: StateOwner, bindings: [StateBinding]) {
        self.owner = owner
        self.bindings = bindings
        var buffers: [String: MLMultiArray] = [:]
        for binding in bindings {
            // The shape was checked when the model loaded, so this cannot fail.
            buffers[binding.name] = try! MLMultiArray(
                shape: binding.shape.map { NSNumber(value: $0) }, dataType: binding.dataType)
        }
        self.buffers = buffers
    }

    /// The names of the state's buffers, in the model's order. **Tessera extension.**
    ///
    /// ```swift
    /// model.makeState().stateNames      // ["keyCache", "valueCache"]
    /// ```
    public var stateNames: [String] { bindings.map(\.name) }

    /// Calls `body` with the buffer of the named state, which it may read and write.
    ///
    /// Changes `body` makes are what the next prediction reads. The multi-array is valid only
    /// inside `body`; do not keep it. A prediction on this state waits until `body` returns.
    ///
    /// ```swift
    /// state.withMultiArray(for: "acc") { acc in
    ///     acc[0] = 1                    // seed the accumulator
    /// }
    /// let values = state.withMultiArray(for: "acc") { MLShapedArray<Float16>($0).scalars }
    /// ```
    ///
    /// - Precondition: the model has a state named `stateName` (see ``stateNames``). Core ML
    ///   does not throw here, so an unknown name stops the program with a message naming it.
    public func withMultiArray<R>(for stateName: String, _ body: (MLMultiArray) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        guard let buffer = buffers[stateName] else {
            fatalError("[MLState.withMultiArray(for:_:)] no state named \"\(stateName)\" (states: \(stateNames))")
        }
        return try body(buffer)
    }

    /// Calls `body` with the state's only buffer.
    ///
    /// ```swift
    /// let shape = try state.withMultiArray { $0.shape }
    /// ```
    ///
    /// - Throws: ``MLModelError`` `.generic` when the state does not have exactly one buffer.
    public func withMultiArray<R>(_ body: (MLMultiArray) -> R) throws -> R {
        guard bindings.count == 1 else {
            throw MLModelError(
                .generic,
                "the state has \(bindings.count) buffers (\(stateNames)); name one with withMultiArray(for:_:)")
        }
        return withMultiArray(for: bindings[0].name, body)
    }

    /// Runs one prediction step under the state's lock: `body` gets the current buffers as
    /// tensors (keyed by state name) and returns the updated values it computed, fully
    /// materialized; they are copied into the buffers before the lock is released.
    func withLockedTensors<Result>(
        _ body: ([String: MLTensor]) throws -> (result: Result, updated: [String: MLTensor])
    ) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        var current: [String: MLTensor] = [:]
        for binding in bindings {
            // A copy, so the prediction's graph never aliases the buffer it writes back into.
            current[binding.name] = binding.tensor(copying: buffers[binding.name]!)
        }
        let (result, updated) = try body(current)
        for binding in bindings {
            guard let tensor = updated[binding.name], let buffer = buffers[binding.name] else { continue }
            tensor.multiArray(dataType: binding.dataType).transfer(to: buffer)
        }
        return result
    }
}

/// The identity of the model a state belongs to: one per loaded model, kept alive by its
/// states, so identity comparison cannot be fooled by a reused address.
final class StateOwner: Sendable {
    /// The model's file name, for error messages.
    let modelName: String

    init(modelName: String) {
        self.modelName = modelName
    }
}
