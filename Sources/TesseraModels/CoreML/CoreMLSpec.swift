/// The parsed form of a Core ML specification (`CoreML.Specification` in coremltools'
/// `mlmodel/format/*.proto`): the parts Tessera reads, with the schema's names.
///
/// These are package-internal representations of the file; Apple's public types
/// (`MLModelDescription`, `MLFeatureDescription`, …) are built on them.
package enum CoreMLSpec {}

extension CoreMLSpec {
    /// A model file's top-level message (`Model`).
    package struct Model: Sendable, Equatable {
        /// The specification version (6 = iOS 15 … 10 = iOS 26; ML programs need ≥ 6).
        package var specificationVersion: Int32
        /// Inputs, outputs, states, metadata.
        package var description: ModelDescription
        /// Whether the model declares on-device training.
        package var isUpdatable: Bool
        /// Which kind of model the file holds, or `nil` when it sets none.
        package var type: ModelType?
        /// The ML program, when ``type`` is ``ModelType/mlProgram``.
        package var mlProgram: MILProgram?
        /// The network, when ``type`` is one of the three NeuralNetwork kinds.
        package var neuralNetwork: NeuralNetwork? = nil
        /// The parameters of a classic model (a linear model, tree ensemble, pipeline, …), when
        /// ``type`` is one.
        package var classic: Classic? = nil

        /// The ML program, or an error that says what the file holds instead.
        ///
        /// - Parameter file: The file name for the message.
        /// - Throws: ``ModelFormatError/Kind/unsupportedModelType`` for any other model type.
        package func requireMLProgram(file: String) throws -> MILProgram {
            if let mlProgram { return mlProgram }
            guard let type else {
                throw ModelFormatError(.unsupportedModelType, file: file, "the specification sets no model type")
            }
            throw ModelFormatError(
                .unsupportedModelType, file: file,
                "the file holds a \(type) model (Model field \(type.rawValue)); Tessera runs ML Program models "
                    + "only: re-convert with coremltools, ct.convert(..., convert_to=\"mlprogram\")")
        }

        /// The class labels of a classifier: from the ML program's `classify` op, in order, or
        /// from a NeuralNetwork classifier's label list or a classic classifier's parameters.
        ///
        /// `nil` when the model is not a classifier.
        package var classLabels: ClassLabels? {
            if let labels = neuralNetwork?.classLabels { return labels }
            if let classic { return classic.classLabels }
            guard let function = try? mlProgram?.function(named: description.defaultFunctionName.nilIfEmpty),
                let block = try? function.block(),
                let classify = block.operations.last(where: { $0.type == "classify" }),
                case .value(let value)? = classify.inputs["classes"]?.bindings.first
            else { return nil }
            return ClassLabels(value)
        }
    }

    /// A classifier's labels: strings or integers.
    package enum ClassLabels: Sendable, Equatable {
        /// String labels (`"cat"`, `"dog"`).
        case strings([String])
        /// Integer labels.
        case int64s([Int64])

        /// Reads labels from a `classify.classes` literal: a list of scalar tensors, or one
        /// tensor of strings or integers.
        init?(_ value: MILValue) {
            var strings: [String] = []
            var integers: [Int64] = []
            var tensors: [MILTensorStorage] = []
            switch value.storage {
            case .immediate(.list(let values)), .immediate(.tuple(let values)):
                for element in values {
                    guard let tensor = element.tensor else { return nil }
                    tensors.append(tensor)
                }
            case .immediate(.tensor(let tensor)): tensors = [tensor]
            default: return nil
            }
            for tensor in tensors {
                switch tensor {
                case .strings(let values): strings += values
                case .longInts(let values): integers += values
                case .ints(let values): integers += values.map(Int64.init)
                default: return nil
                }
            }
            guard strings.isEmpty || integers.isEmpty else { return nil }
            self = integers.isEmpty ? .strings(strings) : .int64s(integers)
        }
    }

    /// The alternatives of `Model`'s `Type` oneof, with their field numbers as raw values.
    ///
    /// Interpolating a case prints its `Model.proto` field name (`neuralNetwork`).
    package enum ModelType: Int, Sendable, CaseIterable {
        /// `Model.pipelineClassifier`, field 200.
        case pipelineClassifier = 200
        /// `Model.pipelineRegressor`, field 201.
        case pipelineRegressor = 201
        /// `Model.pipeline`, field 202.
        case pipeline = 202
        /// `Model.glmRegressor`, field 300.
        case glmRegressor = 300
        /// `Model.supportVectorRegressor`, field 301.
        case supportVectorRegressor = 301
        /// `Model.treeEnsembleRegressor`, field 302.
        case treeEnsembleRegressor = 302
        /// `Model.neuralNetworkRegressor`, field 303.
        case neuralNetworkRegressor = 303
        /// `Model.bayesianProbitRegressor`, field 304.
        case bayesianProbitRegressor = 304
        /// `Model.glmClassifier`, field 400.
        case glmClassifier = 400
        /// `Model.supportVectorClassifier`, field 401.
        case supportVectorClassifier = 401
        /// `Model.treeEnsembleClassifier`, field 402.
        case treeEnsembleClassifier = 402
        /// `Model.neuralNetworkClassifier`, field 403.
        case neuralNetworkClassifier = 403
        /// `Model.kNearestNeighborsClassifier`, field 404.
        case kNearestNeighborsClassifier = 404
        /// `Model.neuralNetwork`, field 500.
        case neuralNetwork = 500
        /// `Model.itemSimilarityRecommender`, field 501.
        case itemSimilarityRecommender = 501
        /// `Model.mlProgram`, field 502.
        case mlProgram = 502
        /// `Model.customModel`, field 555.
        case customModel = 555
        /// `Model.linkedModel`, field 556.
        case linkedModel = 556
        /// `Model.classConfidenceThresholding`, field 560.
        case classConfidenceThresholding = 560
        /// `Model.oneHotEncoder`, field 600.
        case oneHotEncoder = 600
        /// `Model.imputer`, field 601.
        case imputer = 601
        /// `Model.featureVectorizer`, field 602.
        case featureVectorizer = 602
        /// `Model.dictVectorizer`, field 603.
        case dictVectorizer = 603
        /// `Model.scaler`, field 604.
        case scaler = 604
        /// `Model.categoricalMapping`, field 606.
        case categoricalMapping = 606
        /// `Model.normalizer`, field 607.
        case normalizer = 607
        /// `Model.arrayFeatureExtractor`, field 609.
        case arrayFeatureExtractor = 609
        /// `Model.nonMaximumSuppression`, field 610.
        case nonMaximumSuppression = 610
        /// `Model.identity`, field 900.
        case identity = 900
        /// `Model.textClassifier`, field 2000.
        case textClassifier = 2000
        /// `Model.wordTagger`, field 2001.
        case wordTagger = 2001
        /// `Model.visionFeaturePrint`, field 2002.
        case visionFeaturePrint = 2002
        /// `Model.soundAnalysisPreprocessing`, field 2003.
        case soundAnalysisPreprocessing = 2003
        /// `Model.gazetteer`, field 2004.
        case gazetteer = 2004
        /// `Model.wordEmbedding`, field 2005.
        case wordEmbedding = 2005
        /// `Model.audioFeaturePrint`, field 2006.
        case audioFeaturePrint = 2006
        /// `Model.serializedModel`, field 3000.
        case serializedModel = 3000
    }
}

extension String {
    /// `nil` for the empty string, the string otherwise (proto3 writes "" for "not set").
    var nilIfEmpty: String? { isEmpty ? nil : self }
}
