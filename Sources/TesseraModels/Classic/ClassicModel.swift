import Foundation
import TesseraMultiArray
import TesseraTensor

/// A classic Core ML model ready to run: linear models, support vector machines, tree
/// ensembles, k-NN, the feature-engineering models and pipelines of them.
///
/// A classic model reads the inputs its description names from a feature provider (with
/// Core ML's conversions, see `MLFeatureValue+Conversion.swift`) and returns its outputs as
/// feature values. Its parameters are checked once, when the model loads
/// (``ClassicModelFactory``); a bad input at prediction time throws ``MLModelError``
/// `.featureType` naming the model part and the input.
protocol ClassicModel: Sendable {
    /// Predicts one row.
    ///
    /// - Throws: ``MLModelError`` `.featureType` for a missing or unusable input.
    func predict(_ row: any MLFeatureProvider) throws -> [String: MLFeatureValue]

    /// Predicts many rows in order. Models that evaluate a batch in one pass (tree ensembles,
    /// linear models, pipelines) override the default, which predicts row by row.
    ///
    /// - Throws: ``MLModelError`` whose message starts with "batch input N:".
    func predict(batch rows: [any MLFeatureProvider]) throws -> [[String: MLFeatureValue]]
}

extension ClassicModel {
    func predict(batch rows: [any MLFeatureProvider]) throws -> [[String: MLFeatureValue]] {
        try rows.enumerated().map { index, row in try ClassicBatch.item(index) { try predict(row) } }
    }
}

/// Batch helpers shared by the classic models.
enum ClassicBatch {
    /// Runs `body` for batch item `index`, putting "batch input N: " in front of its error.
    static func item<T>(_ index: Int, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as MLModelError where !error.message.hasPrefix("batch input ") {
            throw MLModelError(error.code, "batch input \(index): \(error.message)", underlyingError: error)
        }
    }
}

/// The features a classic model reads and writes, from its own description (a pipeline's
/// stages each have one).
struct ClassicInterface: Sendable {
    /// The model part, for messages (`treeEnsembleClassifier`).
    let part: String
    let inputs: [MLFeatureDescription]
    let outputs: [MLFeatureDescription]
    /// The classifier's label output: the description's `predictedFeatureName`, else its
    /// first string or int64 output.
    let labelName: String?
    /// The classifier's probabilities output: `predictedProbabilitiesName`, else its first
    /// dictionary output.
    let probabilitiesName: String?

    init(part: String, description: MLModelDescription) {
        self.part = part
        inputs = description.inputOrder.compactMap { description.inputDescriptionsByName[$0] }
        outputs = description.outputOrder.compactMap { description.outputDescriptionsByName[$0] }
        labelName =
            description.predictedFeatureName
            ?? outputs.first(where: { $0.type == .string || $0.type == .int64 })?.name
        probabilitiesName =
            description.predictedProbabilitiesName ?? outputs.first(where: { $0.type == .dictionary })?.name
    }

    /// The output named `name`.
    func output(_ name: String) -> MLFeatureDescription? { outputs.first { $0.name == name } }

    /// A load error naming the model part.
    func invalid(_ message: String, file: String) -> ModelFormatError {
        ModelFormatError(.invalidSpecification, file: file, "\(part): \(message)")
    }

    /// A prediction-time input error naming the model part.
    func inputError(_ message: String) -> MLModelError {
        MLModelError(.featureType, "\(part): \(message)")
    }

    /// The single input of a one-input model.
    func singleInput(file: String) throws -> MLFeatureDescription {
        guard let input = inputs.first else { throw invalid("the model declares no input", file: file) }
        return input
    }

    /// The first output of a one-output model.
    func singleOutput(file: String) throws -> MLFeatureDescription {
        guard let output = outputs.first else { throw invalid("the model declares no output", file: file) }
        return output
    }

    /// The input's value from a row: undefined or missing inputs are `nil` when the input is
    /// optional and an error otherwise.
    func value(of input: MLFeatureDescription, in row: any MLFeatureProvider) throws -> MLFeatureValue? {
        guard let value = row.featureValue(for: input.name), !value.isUndefined else {
            if input.isOptional { return nil }
            throw inputError(
                "input \"\(input.name)\" is missing; the model expects \(input.expectation) "
                    + "(model inputs: \(inputs.map(\.name).joined(separator: ", ")))")
        }
        return value
    }
}

extension MLModel {
    /// Predicts a batch on a classic model in one pass.
    func classicBatchOutputs(_ model: any ClassicModel, _ batch: any MLBatchProvider) throws
        -> [any MLFeatureProvider]
    {
        let rows = (0..<batch.count).map { batch.features(at: $0) }
        return try model.predict(batch: rows).map { MLDictionaryFeatureProvider(features: $0) }
    }

    /// The tensor prediction of a classic model: tensors in as multi-arrays; numeric and
    /// multi-array outputs back as tensors (labels and dictionaries have no tensor form and
    /// are left out).
    func classicTensorPrediction(_ model: any ClassicModel, from inputs: [String: MLTensor]) async throws
        -> [String: MLTensor]
    {
        var features: [String: MLFeatureValue] = [:]
        for (name, tensor) in inputs {
            features[name] = MLFeatureValue(multiArray: await tensor.multiArray(dataType: .double))
        }
        let outputs = try model.predict(MLDictionaryFeatureProvider(features: features))
        var tensors: [String: MLTensor] = [:]
        for (name, value) in outputs {
            switch value.storage {
            case .multiArray(let array): tensors[name] = MLTensor(MLShapedArray<Float>(converting: array))
            case .double(let number):
                tensors[name] = MLTensor(MLShapedArray<Float>(scalars: [Float(number)], shape: []))
            case .int64(let number):
                tensors[name] = MLTensor(MLShapedArray<Int32>(scalars: [Int32(clamping: number)], shape: []))
            default: continue
            }
        }
        return tensors
    }
}
