/// A model's interface: its inputs, outputs, metadata and, for a classifier, its labels.
///
/// ```swift
/// let description = model.modelDescription
/// for (name, input) in description.inputDescriptionsByName { print(name, input) }
/// description.predictedFeatureName          // "classLabel" for a classifier
/// description.classLabels as? [String]      // ["0", "1", …, "9"]
/// description.metadata[.author] as? String
/// ```
public final class MLModelDescription: Sendable {
    /// The inputs by name.
    public let inputDescriptionsByName: [String: MLFeatureDescription]
    /// The outputs by name.
    public let outputDescriptionsByName: [String: MLFeatureDescription]
    /// The state buffers by name (empty for stateless models).
    public let stateDescriptionsByName: [String: MLFeatureDescription]
    /// The inputs on-device training uses (empty: Tessera does not train).
    public let trainingInputDescriptionsByName: [String: MLFeatureDescription]
    /// A classifier's label output, `nil` for other models.
    public let predictedFeatureName: String?
    /// A classifier's probabilities output, `nil` for other models.
    public let predictedProbabilitiesName: String?
    /// Whether the model declares on-device training.
    public let isUpdatable: Bool
    /// The inputs in the model's order. **Tessera extension.**
    public let inputOrder: [String]
    /// The outputs in the model's order. **Tessera extension.**
    public let outputOrder: [String]
    let metadataStrings: [MLModelMetadataKey: String]
    let creatorDefined: [String: String]
    let labels: CoreMLSpec.ClassLabels?

    init(
        inputs: [MLFeatureDescription], outputs: [MLFeatureDescription], states: [MLFeatureDescription],
        predictedFeatureName: String?, predictedProbabilitiesName: String?, isUpdatable: Bool,
        metadata: [MLModelMetadataKey: String], creatorDefined: [String: String], labels: CoreMLSpec.ClassLabels?
    ) {
        inputDescriptionsByName = Dictionary(inputs.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        outputDescriptionsByName = Dictionary(outputs.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        stateDescriptionsByName = Dictionary(states.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        trainingInputDescriptionsByName = [:]
        inputOrder = inputs.map(\.name)
        outputOrder = outputs.map(\.name)
        self.predictedFeatureName = predictedFeatureName
        self.predictedProbabilitiesName = predictedProbabilitiesName
        self.isUpdatable = isUpdatable
        self.metadataStrings = metadata
        self.creatorDefined = creatorDefined
        self.labels = labels
    }

    /// Author, description, license and version strings, and the creator-defined entries
    /// (`[String: String]`) under `.creatorDefinedKey`. Empty entries are left out.
    public var metadata: [MLModelMetadataKey: Any] {
        var result: [MLModelMetadataKey: Any] = [:]
        for (key, value) in metadataStrings { result[key] = value }
        if !creatorDefined.isEmpty { result[.creatorDefinedKey] = creatorDefined }
        return result
    }

    /// A classifier's labels, in output order: `[String]` or `[Int64]`; `nil` for other models.
    public var classLabels: [Any]? {
        switch labels {
        case .strings(let strings): strings
        case .int64s(let integers): integers
        case nil: nil
        }
    }
}
