import TesseraProtobuf

extension CoreMLSpec {
    /// The parameters of a classic (non-neural) model: one alternative of `Model`'s `Type`
    /// oneof other than the neural network and ML program ones, decoded from its message in
    /// `mlmodel/format/*.proto`.
    ///
    /// Decoding only reads the fields; ``ClassicModelFactory`` checks that they fit together
    /// (node ids, vector lengths, category types) when the model loads.
    package indirect enum Classic: Sendable, Equatable {
        /// `GLMRegressor` (field 300).
        case glmRegressor(GLMRegressor)
        /// `GLMClassifier` (field 400).
        case glmClassifier(GLMClassifier)
        /// `SupportVectorRegressor` (field 301).
        case supportVectorRegressor(SupportVectorRegressor)
        /// `SupportVectorClassifier` (field 401).
        case supportVectorClassifier(SupportVectorClassifier)
        /// `TreeEnsembleRegressor` (302) or `TreeEnsembleClassifier` (402).
        case treeEnsemble(TreeEnsemble)
        /// `KNearestNeighborsClassifier` (field 404).
        case kNearestNeighborsClassifier(NearestNeighborsClassifier)
        /// `Pipeline` (202), `PipelineClassifier` (200) or `PipelineRegressor` (201).
        case pipeline(Pipeline)
        /// `OneHotEncoder` (field 600).
        case oneHotEncoder(OneHotEncoder)
        /// `Imputer` (field 601).
        case imputer(Imputer)
        /// `FeatureVectorizer` (field 602): the input columns and their widths.
        case featureVectorizer([FeatureVectorizerColumn])
        /// `DictVectorizer` (field 603): the keys, in output order.
        case dictVectorizer(ClassLabels)
        /// `Scaler` (field 604).
        case scaler(Scaler)
        /// `CategoricalMapping` (field 606).
        case categoricalMapping(CategoricalMapping)
        /// `Normalizer` (field 607).
        case normalizer(NormType)
        /// `ArrayFeatureExtractor` (field 609): the indices to extract.
        case arrayFeatureExtractor([Int64])
        /// `NonMaximumSuppression` (field 610).
        case nonMaximumSuppression(NonMaximumSuppression)
        /// `Identity` (field 900).
        case identity
        /// `ClassConfidenceThresholding` (field 560); its precision-recall curves are
        /// metadata for Apple's Vision framework and do not change the values.
        case classConfidenceThresholding

        /// Decodes the message of model type `type`, or returns `nil` when `type` is not a
        /// classic model Tessera decodes (neural networks, ML programs, Apple's built-ins).
        static func decode(_ type: ModelType, from reader: inout ProtobufReader) throws -> Classic? {
            switch type {
            case .glmRegressor: return .glmRegressor(try GLMRegressor(from: &reader))
            case .glmClassifier: return .glmClassifier(try GLMClassifier(from: &reader))
            case .supportVectorRegressor: return .supportVectorRegressor(try SupportVectorRegressor(from: &reader))
            case .supportVectorClassifier: return .supportVectorClassifier(try SupportVectorClassifier(from: &reader))
            case .treeEnsembleRegressor: return .treeEnsemble(try TreeEnsemble(from: &reader, classifier: false))
            case .treeEnsembleClassifier: return .treeEnsemble(try TreeEnsemble(from: &reader, classifier: true))
            case .kNearestNeighborsClassifier:
                return .kNearestNeighborsClassifier(try NearestNeighborsClassifier(from: &reader))
            case .pipeline: return .pipeline(try Pipeline(from: &reader, kind: .plain))
            case .pipelineClassifier: return .pipeline(try Pipeline(wrappedIn: &reader, kind: .classifier))
            case .pipelineRegressor: return .pipeline(try Pipeline(wrappedIn: &reader, kind: .regressor))
            case .oneHotEncoder: return .oneHotEncoder(try OneHotEncoder(from: &reader))
            case .imputer: return .imputer(try Imputer(from: &reader))
            case .featureVectorizer: return .featureVectorizer(try reader.readFeatureVectorizer())
            case .dictVectorizer: return .dictVectorizer(try reader.readDictVectorizer())
            case .scaler: return .scaler(try Scaler(from: &reader))
            case .categoricalMapping: return .categoricalMapping(try CategoricalMapping(from: &reader))
            case .normalizer: return .normalizer(try reader.readNormalizer())
            case .arrayFeatureExtractor: return .arrayFeatureExtractor(try reader.readArrayFeatureExtractor())
            case .nonMaximumSuppression: return .nonMaximumSuppression(try NonMaximumSuppression(from: &reader))
            case .identity: return .identity
            case .classConfidenceThresholding: return .classConfidenceThresholding
            default: return nil
            }
        }

        /// A classifier's labels (for a pipeline, its last model's), or `nil` for other models.
        var classLabels: ClassLabels? {
            switch self {
            case .glmClassifier(let model): model.labels
            case .supportVectorClassifier(let model): model.labels
            case .treeEnsemble(let model): model.labels
            case .kNearestNeighborsClassifier(let model): model.distinctLabels
            case .pipeline(let pipeline): pipeline.models.last?.classic?.classLabels
            default: nil
            }
        }
    }

    /// Apple's proprietary model types: their code is part of Apple's frameworks, not of the
    /// file, so no other runtime can run them.
    package static let appleFrameworkModelTypes: Set<ModelType> = [
        .textClassifier, .wordTagger, .visionFeaturePrint, .audioFeaturePrint, .soundAnalysisPreprocessing,
        .gazetteer, .wordEmbedding, .itemSimilarityRecommender, .linkedModel,
    ]
}
