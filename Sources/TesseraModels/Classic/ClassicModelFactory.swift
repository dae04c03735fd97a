import Foundation

/// Builds classic models from their parsed parameters, checking them once: every model part
/// that does not fit (a tree pointing at a missing node, a support-vector count that
/// disagrees with the coefficients, …) fails the load with an error naming it.
enum ClassicModelFactory {
    /// The classic model `package` holds, with its description; `nil` when it holds an ML
    /// program or a neural network.
    ///
    /// - Throws: ``MLModelError`` `.generic` for one of Apple's proprietary model types
    ///   (``CoreMLSpec/appleFrameworkModelTypes``), `.io` for parameters that do not fit.
    static func model(for package: CoreMLPackage, name: String, snapshot: MLModelConfiguration.Snapshot) throws
        -> (description: MLModelDescription, model: any ClassicModel)?
    {
        let spec = package.model
        if let type = spec.type, CoreMLSpec.appleFrameworkModelTypes.contains(type) {
            throw MLModelError(
                .generic,
                "cannot load \(name): the file holds a \(type) model (Model field \(type.rawValue)), which Apple's "
                    + "frameworks implement (Create ML, Natural Language, Vision, Sound Analysis); its code is not in "
                    + "the model file, so it needs Apple's framework and Tessera cannot run it")
        }
        guard let classic = spec.classic else { return nil }
        let description = try MLModelDescription(spec, functionName: nil)
        do {
            let model = try make(
                classic, type: spec.type, description: description, package: package, name: name, snapshot: snapshot)
            return (description, model)
        } catch let error as ModelFormatError {
            throw MLModelError(wrapping: error, model: name)
        }
    }

    /// Builds the runnable model for `classic`.
    static func make(
        _ classic: CoreMLSpec.Classic, type: CoreMLSpec.ModelType?, description: MLModelDescription,
        package: CoreMLPackage, name: String, snapshot: MLModelConfiguration.Snapshot
    ) throws -> any ClassicModel {
        let interface = ClassicInterface(part: type.map { "\($0)" } ?? "model", description: description)
        let file = package.modelDisplayName
        switch classic {
        case .glmRegressor(let spec): return try GLMRegressorModel(spec, interface, file: file)
        case .glmClassifier(let spec): return try GLMClassifierModel(spec, interface, file: file)
        case .supportVectorRegressor(let spec): return try SupportVectorRegressorModel(spec, interface, file: file)
        case .supportVectorClassifier(let spec): return try SupportVectorClassifierModel(spec, interface, file: file)
        case .treeEnsemble(let spec): return try TreeEnsembleModel(spec, interface, file: file)
        case .kNearestNeighborsClassifier(let spec):
            return try NearestNeighborsClassifierModel(spec, interface, file: file)
        case .pipeline(let spec):
            return try PipelineModel(spec, interface, package: package, name: name, snapshot: snapshot)
        case .oneHotEncoder(let spec): return try OneHotEncoderModel(spec, interface, file: file)
        case .imputer(let spec): return try ImputerModel(spec, interface, file: file)
        case .featureVectorizer(let columns): return try FeatureVectorizerModel(columns, interface, file: file)
        case .dictVectorizer(let keys): return try DictVectorizerModel(keys, interface, file: file)
        case .scaler(let spec): return try ScalerModel(spec, interface, file: file)
        case .categoricalMapping(let spec): return try CategoricalMappingModel(spec, interface, file: file)
        case .normalizer(let norm): return try NormalizerModel(norm, interface, file: file)
        case .arrayFeatureExtractor(let indices): return try ArrayFeatureExtractorModel(indices, interface, file: file)
        case .nonMaximumSuppression(let spec): return try NonMaximumSuppressionModel(spec, interface, file: file)
        case .identity: return try PassThroughModel(interface, file: file)
        case .classConfidenceThresholding: return try ClassConfidenceThresholdingModel(interface, file: file)
        }
    }

    /// Builds one stage of a pipeline: the one function through which a pipeline makes its
    /// stages, whatever they are (classic models, nested pipelines, ML programs, neural
    /// networks): the stage loads as a model of its own, sharing the package's files.
    ///
    /// - Throws: ``MLModelError`` naming the stage when it cannot load.
    static func stage(
        _ model: CoreMLSpec.Model, index: Int, of package: CoreMLPackage, name: String,
        snapshot: MLModelConfiguration.Snapshot
    ) throws -> MLModel {
        let stageName = "\(name) (pipeline stage \(index))"
        let stagePackage: CoreMLPackage
        do {
            stagePackage = try CoreMLPackage(stage: model, of: package)
        } catch let error as ModelFormatError {
            throw MLModelError(wrapping: error, model: stageName)
        }
        return try MLModel(
            package: stagePackage, snapshot: snapshot, name: stageName, reporter: ProgressReporter(handler: nil))
    }
}

extension CoreMLPackage {
    /// A pipeline stage as a package of its own: the parent's files, the stage's
    /// specification, and the weight files the stage's program references.
    init(stage model: CoreMLSpec.Model, of parent: CoreMLPackage) throws {
        url = parent.url
        modelURL = parent.modelURL
        modelDisplayName = parent.modelDisplayName
        weightsDirectory = parent.weightsDirectory
        self.model = model
        inMemoryWeights = parent.inMemoryWeights
        weightFiles = try Self.loadWeights(
            of: model, weightsDirectory: parent.weightsDirectory, modelURL: parent.modelURL,
            inMemory: parent.inMemoryWeights)
    }
}

extension CoreMLSpec.ModelType {
    /// Whether the type is one of the classic models ``CoreMLSpec/Classic`` decodes.
    var isClassic: Bool {
        switch self {
        case .pipelineClassifier, .pipelineRegressor, .pipeline, .glmRegressor, .supportVectorRegressor,
            .treeEnsembleRegressor, .glmClassifier, .supportVectorClassifier, .treeEnsembleClassifier,
            .kNearestNeighborsClassifier, .classConfidenceThresholding, .oneHotEncoder, .imputer, .featureVectorizer,
            .dictVectorizer, .scaler, .categoricalMapping, .normalizer, .arrayFeatureExtractor,
            .nonMaximumSuppression, .identity:
            true
        default: false
        }
    }
}
