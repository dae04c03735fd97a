import Foundation
import TesseraMultiArray
import TesseraTensor

// Stateful predictions. How state tensors reach the lowered program is described at the top
// of MLState.swift.

extension MLModel {
    /// Allocates the model's state buffers, zero-filled, for a sequence of stateful
    /// predictions.
    ///
    /// ```swift
    /// let state = model.makeState()
    /// let first = try model.prediction(from: input, using: state)
    /// ```
    ///
    /// A stateless model returns an empty state, which the stateful prediction methods accept.
    public func makeState() -> MLState {
        MLState(owner: stateOwner, bindings: stateBindings)
    }

    /// Predicts the outputs for one input, reading and updating `state`, blocking the calling
    /// thread while it runs.
    ///
    /// ```swift
    /// let state = model.makeState()
    /// for chunk in chunks {
    ///     let output = try model.prediction(from: chunk, using: state)
    /// }
    /// ```
    ///
    /// - Throws: ``MLModelError``: `.featureType` for a bad input, `.generic` for a state
    ///   made by another model or a failing program. When it throws, the state is unchanged.
    public func prediction(from input: any MLFeatureProvider, using state: MLState) throws -> any MLFeatureProvider {
        try prediction(from: input, using: state, options: MLPredictionOptions())
    }

    /// Predicts the outputs for one input with options (which Tessera ignores), reading and
    /// updating `state`, blocking the calling thread while it runs.
    ///
    /// Predictions sharing `state` are serialized: this waits for one in flight to finish.
    ///
    /// ```swift
    /// let output = try model.prediction(from: input, using: state, options: MLPredictionOptions())
    /// ```
    public func prediction(from input: any MLFeatureProvider, using state: MLState, options: MLPredictionOptions)
        throws -> any MLFeatureProvider
    {
        try checkOwnership(of: state)
        if let classic = classicModel { return try classicPrediction(classic, from: input) }
        return try runStateful(boundInputs(input), state: state).provider()
    }

    /// Predicts the outputs for one input, reading and updating `state`, without blocking a
    /// thread of Swift's cooperative pool.
    ///
    /// The inputs are checked first; the prediction then waits for the state (predictions
    /// sharing it are serialized) and runs on a Dispatch worker while the task is suspended.
    ///
    /// ```swift
    /// let state = model.makeState()
    /// let output = try await model.prediction(from: input, using: state)
    /// ```
    ///
    /// - Throws: as the synchronous overload does, and `.predictionCancelled` when the task is
    ///   cancelled before the prediction starts.
    public nonisolated(nonsending) func prediction(
        from input: any MLFeatureProvider, using state: MLState, options: MLPredictionOptions = MLPredictionOptions()
    ) async throws -> any MLFeatureProvider {
        try Self.checkCancellation()
        try checkOwnership(of: state)
        if let classic = classicModel { return try classicPrediction(classic, from: input) }
        let inputs = try boundInputs(input)
        return try await onWorker { try self.runStateful(inputs, state: state) }.provider()
    }

    /// Predicts multi-array outputs from tensors, reading and updating `state`, as Core ML's
    /// stateful tensor prediction does.
    ///
    /// ```swift
    /// let state = model.makeState()
    /// let outputs = try await model.prediction(from: ["x": MLTensor(shape: [1, 4], scalars: xs)], using: state)
    /// ```
    ///
    /// - Throws: as the feature-provider overloads do.
    public func prediction(from inputs: [String: MLTensor], using state: MLState) async throws -> [String: MLTensor] {
        try Self.checkCancellation()
        try checkOwnership(of: state)
        if let classic = classicModel { return try await classicTensorPrediction(classic, from: inputs) }
        var bound: [String: MLTensor] = [:]
        for binding in bindings {
            bound[binding.name] = try binding.tensor(from: inputs, inputs: modelDescription.inputOrder)
        }
        let checked = bound
        let pending = try await onWorker { try self.runStateful(checked, state: state) }
        var outputs: [String: MLTensor] = [:]
        for feature in pending.features { outputs[feature.name] = feature.tensor }
        if let classifier = pending.classifier {
            outputs[classifier.probabilitiesName ?? classifier.labelName ?? "probabilities"] = classifier.probabilities
        }
        return outputs
    }

    /// Runs the program on checked inputs under the state's lock: state tensors in, updated
    /// states out and written back, outputs computed (but not yet converted to features).
    func runStateful(_ inputs: [String: MLTensor], state: MLState) throws -> PendingOutputs {
        try runStateful(inputs, state: state, run: runProgram)
    }

    /// ``runStateful(_:state:)`` with the program replaced by `run` (tests drive the state
    /// plumbing with it while the lowering does not run state ops).
    func runStateful(
        _ inputs: [String: MLTensor], state: MLState, run: ([String: MLTensor]) throws -> [String: MLTensor]
    ) throws -> PendingOutputs {
        try state.withLockedTensors { current in
            let results = try run(inputs.merging(current) { _, state in state })
            let pending = try pendingOutputs(results)
            var updated: [String: MLTensor] = [:]
            for binding in state.bindings {
                guard var tensor = results[binding.name] else { continue }
                if tensor.rank == 0, binding.shape == [1] { tensor = tensor.reshaped(to: [1]) }
                guard tensor.shape == binding.shape else {
                    throw MLModelError(
                        .generic,
                        "the program wrote state \"\(binding.name)\" with shape \(tensor.shape), but the state has "
                            + "shape \(binding.shape)")
                }
                updated[binding.name] = tensor
            }
            try materializeWithinMemoryLimit(pending.tensors + Array(updated.values))
            return (pending, updated)
        }
    }

    /// Throws unless this model made `state`.
    func checkOwnership(of state: MLState) throws {
        guard state.owner === stateOwner else {
            throw MLModelError(
                .generic,
                "the state was made by another model (\(state.owner.modelName)); states belong to the model "
                    + "whose makeState() made them — call makeState() on this model (\(stateOwner.modelName))")
        }
    }

    /// Runs `work` on a Dispatch worker and suspends until it finishes.
    private func onWorker<Result: Sendable>(_ work: @escaping @Sendable () throws -> Result) async throws -> Result {
        try await runOffPool(work)
    }
}
