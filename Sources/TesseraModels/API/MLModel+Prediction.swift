import Foundation
import TesseraMultiArray
import TesseraTensor

extension MLModel {
    /// Predicts the outputs for one input, blocking the calling thread while it runs.
    ///
    /// ```swift
    /// let input = try MLDictionaryFeatureProvider(dictionary: ["image": MLFeatureValue(multiArray: pixels)])
    /// let output = try model.prediction(from: input)
    /// let label = output.featureValue(for: "classLabel")?.stringValue
    /// ```
    ///
    /// A classifier returns its label (`String` or `Int64`) under
    /// ``MLModelDescription/predictedFeatureName`` and the label → probability dictionary under
    /// ``MLModelDescription/predictedProbabilitiesName``; other outputs are multi-arrays of the
    /// declared data type.
    ///
    /// - Throws: ``MLModelError`` `.featureType` for a missing input or one of the wrong type or
    ///   shape (nothing runs then), `.generic` when the program fails.
    public func prediction(from input: any MLFeatureProvider) throws -> any MLFeatureProvider {
        try prediction(from: input, options: MLPredictionOptions())
    }

    /// Predicts the outputs for one input with options (which Tessera ignores), blocking the
    /// calling thread while it runs.
    ///
    /// ```swift
    /// let output = try model.prediction(from: input, options: MLPredictionOptions())
    /// ```
    public func prediction(from input: any MLFeatureProvider, options: MLPredictionOptions) throws
        -> any MLFeatureProvider
    {
        if let classic = classicModel { return try classicPrediction(classic, from: input) }
        return try computedOutputs(boundInputs(input), onTaskThread: false).provider()
    }

    /// Predicts the outputs for one input from an async context: the computation runs on the
    /// calling task's thread, with large loops split across Tessera's kernel workers, and no
    /// hop to another thread (the same cost as the blocking form).
    ///
    /// ```swift
    /// let output = try await model.prediction(from: input)
    /// ```
    ///
    /// The method is `nonisolated(nonsending)`: it checks and binds the inputs on the caller's
    /// actor, so an actor can pass a provider it keeps (Swift 6 would otherwise report "sending
    /// … risks causing data races": Core ML's providers are not `Sendable`).
    ///
    /// - Throws: as the synchronous overload does, and ``MLModelError`` `.predictionCancelled`
    ///   when the task is cancelled before the prediction starts.
    public nonisolated(nonsending) func prediction(
        from input: any MLFeatureProvider, options: MLPredictionOptions = MLPredictionOptions()
    ) async throws -> any MLFeatureProvider {
        try Self.checkCancellation()
        if let classic = classicModel { return try classicPrediction(classic, from: input) }
        return try computedOutputs(boundInputs(input), onTaskThread: true).provider()
    }

    /// Predicts the outputs for each input of a batch, in order.
    ///
    /// ```swift
    /// let outputs = try model.predictions(fromBatch: MLArrayBatchProvider(array: inputs))
    /// ```
    ///
    /// Every input is checked before anything runs. Then the batch runs as **one execution**
    /// (the items concatenated along axis 0, one graph, the outputs split back) when all of
    /// this holds, and otherwise as a loop of single predictions, with the same results
    /// either way (up to float rounding: a matrix product may sum in another order when it
    /// has more rows):
    ///
    /// - the batch has two inputs or more, and the model is stateless, not a classifier, and
    ///   has only multi-array outputs;
    /// - every item gives each input the same shape, of rank 1 or more, and that shape with
    ///   dimension 0 multiplied by the batch count is allowed by the model: the program leaves
    ///   dimension 0 open and the description has a size range containing the new size, or an
    ///   enumerated shape equal to the concatenated one;
    /// - the program keeps items apart along axis 0: each operation's batch rule (element-wise,
    ///   reductions and softmax over other axes, `linear`/`matmul` over leading axes,
    ///   convolution and pooling, reshapes that keep each item contiguous, …) accepts where the
    ///   batch axis is, and every output carries it on axis 0. An operation that mixes items
    ///   (a softmax or reduction over axis 0) or is not known to keep them apart makes the batch
    ///   run as a loop. The verdict is remembered per item shapes and count.
    ///
    /// - Throws: ``MLModelError``; the message starts with the index of the failing input
    ///   ("batch input 2: …"). No outputs are returned when any input fails.
    public func predictions(fromBatch inputBatch: any MLBatchProvider) throws -> any MLBatchProvider {
        try predictions(from: inputBatch, options: MLPredictionOptions())
    }

    /// Predicts the outputs for each input of a batch, with options (which Tessera ignores).
    ///
    /// Runs as one execution or as a loop as ``predictions(fromBatch:)`` describes.
    ///
    /// ```swift
    /// let outputs = try model.predictions(from: batch, options: MLPredictionOptions())
    /// ```
    public func predictions(from inputBatch: any MLBatchProvider, options: MLPredictionOptions) throws
        -> any MLBatchProvider
    {
        MLArrayBatchProvider(array: try batchOutputs(inputBatch))
    }

    /// Predicts multi-array outputs from tensors, as Core ML's tensor prediction does.
    ///
    /// Inputs are checked as feature providers are (names, shapes); a tensor of another scalar
    /// type is cast. Outputs are computed before the call returns. A classifier's label and
    /// probability dictionary are not tensors, so its probabilities come back under the
    /// probabilities output's name.
    ///
    /// ```swift
    /// let outputs = try await model.prediction(from: ["image": MLTensor(shape: [1, 64], scalars: pixels)])
    /// let probabilities = await outputs["classLabel_probs"]!.shapedArray(of: Float.self)
    /// ```
    public func prediction(from inputs: [String: MLTensor]) async throws -> [String: MLTensor] {
        try Self.checkCancellation()
        if let classic = classicModel { return try await classicTensorPrediction(classic, from: inputs) }
        var bound: [String: MLTensor] = [:]
        for binding in bindings {
            bound[binding.name] = try binding.tensor(from: inputs, inputs: modelDescription.inputOrder)
        }
        let pending = try computedOutputs(bound, onTaskThread: true)
        var outputs: [String: MLTensor] = [:]
        for feature in pending.features { outputs[feature.name] = feature.tensor }
        if let classifier = pending.classifier {
            outputs[classifier.probabilitiesName ?? classifier.labelName ?? "probabilities"] = classifier.probabilities
        }
        return outputs
    }

    /// Throws `.predictionCancelled` when the current task is cancelled.
    static func checkCancellation() throws {
        if Task.isCancelled {
            throw MLModelError(.predictionCancelled, "the prediction was cancelled before it started")
        }
    }
}
