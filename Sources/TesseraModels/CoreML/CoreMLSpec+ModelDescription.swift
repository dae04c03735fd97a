extension CoreMLSpec {
    /// A model's interface (`ModelDescription`): features, states, functions, metadata.
    package struct ModelDescription: Sendable, Equatable {
        /// The inputs, in file order.
        package var inputs: [FeatureDescription] = []
        /// The outputs, in file order (for ML programs, the order of the block's outputs).
        package var outputs: [FeatureDescription] = []
        /// The state buffers of a stateful model (iOS 18).
        package var states: [FeatureDescription] = []
        /// A classifier's label output (`""` when not a classifier).
        package var predictedFeatureName = ""
        /// A classifier's probabilities output (`""` when not a classifier).
        package var predictedProbabilitiesName = ""
        /// Per-function interfaces of a multi-function model (iOS 18); empty otherwise.
        package var functions: [FunctionDescription] = []
        /// The function used when the configuration names none (multi-function models).
        package var defaultFunctionName = ""
        /// Inputs used for on-device training.
        package var trainingInputs: [FeatureDescription] = []
        /// Author, license, version and user-defined entries.
        package var metadata = Metadata()

        /// Creates an empty description.
        package init() {}
    }

    /// One function's interface in a multi-function model (`FunctionDescription`).
    package struct FunctionDescription: Sendable, Equatable {
        /// The function's name in the ML program.
        package var name = ""
        /// The inputs.
        package var inputs: [FeatureDescription] = []
        /// The outputs.
        package var outputs: [FeatureDescription] = []
        /// The states.
        package var states: [FeatureDescription] = []
        /// The classifier label output, if any.
        package var predictedFeatureName = ""
        /// The classifier probabilities output, if any.
        package var predictedProbabilitiesName = ""

        /// Creates an empty description.
        package init() {}
    }

    /// A model's metadata (`Metadata`).
    package struct Metadata: Sendable, Equatable {
        /// A one-line description of the model.
        package var shortDescription = ""
        /// The model's version.
        package var versionString = ""
        /// Who made it.
        package var author = ""
        /// Its license.
        package var license = ""
        /// Free-form entries; coremltools adds `com.github.apple.coremltools.version` and friends.
        package var userDefined: [String: String] = [:]

        /// Creates empty metadata.
        package init() {}
    }

    /// A named input, output or state (`FeatureDescription`).
    package struct FeatureDescription: Sendable, Equatable {
        /// The feature's name.
        package var name: String
        /// Its documentation.
        package var shortDescription: String
        /// Its type and constraints.
        package var type: FeatureType

        /// Creates a feature description.
        package init(name: String, shortDescription: String = "", type: FeatureType) {
            self.name = name
            self.shortDescription = shortDescription
            self.type = type
        }
    }
}
