import Foundation
import TesseraImaging
import TesseraMultiArray
import TesseraTensor

/// A prediction's outputs before materialization: the tensors to compute and what each
/// becomes.
struct PendingOutputs {
    /// How one output feature is made from a computed tensor.
    enum Kind {
        /// A multi-array of the declared data type.
        case multiArray(MLMultiArrayDataType)
        /// A double (the tensor's first element).
        case double
        /// An int64 (the tensor's first element).
        case int64
        /// A pixel buffer (see ``ImagePreprocessing/pixelBuffer(from:layout:name:)``).
        case image(ImageColorLayout)
    }

    /// Plain outputs, in the model's order.
    var features: [(name: String, kind: Kind, tensor: MLTensor)] = []
    /// A classifier's probabilities, its labels, and the names of its two outputs.
    var classifier:
        (probabilities: MLTensor, labels: CoreMLSpec.ClassLabels, labelName: String?, probabilitiesName: String?)?

    /// Every tensor to compute.
    var tensors: [MLTensor] { features.map(\.tensor) + (classifier.map { [$0.probabilities] } ?? []) }

    /// The output provider, once ``tensors`` are computed (reading them does not block then).
    func provider() throws -> MLDictionaryFeatureProvider {
        var values: [String: MLFeatureValue] = [:]
        for (name, kind, tensor) in features {
            switch kind {
            case .multiArray(let dataType):
                values[name] = MLFeatureValue(multiArray: tensor.multiArray(dataType: dataType))
            case .double: values[name] = MLFeatureValue(double: Self.doubles(tensor).first ?? 0)
            case .int64:
                let value = Self.doubles(tensor).first ?? 0
                guard let integer = Int64(exactly: value.rounded(.towardZero)) else {
                    throw MLModelError(.generic, "output '\(name)' is \(value), which an int64 feature cannot hold")
                }
                values[name] = MLFeatureValue(int64: integer)
            case .image(let layout):
                values[name] = MLFeatureValue(
                    pixelBuffer: try ImagePreprocessing.pixelBuffer(from: tensor, layout: layout, name: name))
            }
        }
        if let classifier {
            let probabilities = Self.doubles(classifier.probabilities)
            let keys: [AnyHashable]
            switch classifier.labels {
            case .strings(let labels): keys = labels.map(AnyHashable.init)
            case .int64s(let labels): keys = labels.map(AnyHashable.init)
            }
            guard probabilities.count == keys.count, !keys.isEmpty else {
                throw MLModelError(
                    .generic,
                    "the classifier has \(keys.count) class labels but its probabilities tensor has "
                        + "\(probabilities.count) elements (shape \(classifier.probabilities.shape))")
            }
            var best = 0
            for index in probabilities.indices where probabilities[index] > probabilities[best] { best = index }
            if let name = classifier.labelName {
                switch classifier.labels {
                case .strings(let labels): values[name] = MLFeatureValue(string: labels[best])
                case .int64s(let labels): values[name] = MLFeatureValue(int64: labels[best])
                }
            }
            if let name = classifier.probabilitiesName {
                var dictionary: [AnyHashable: NSNumber] = [:]
                for (key, probability) in zip(keys, probabilities) { dictionary[key] = NSNumber(value: probability) }
                values[name] = MLFeatureValue(storage: .dictionary(dictionary))
            }
        }
        return MLDictionaryFeatureProvider(features: values)
    }

    /// A computed tensor's elements as doubles, row-major.
    private static func doubles(_ tensor: MLTensor) -> [Double] {
        MLShapedArray<Double>(tensor.multiArray(dataType: .double)).scalars
    }
}

extension MLModel {
    /// Maps the program's results to the model's output features.
    ///
    /// A classifier's label and probabilities come from one probabilities tensor with one
    /// element per label: the program's value named like the probabilities output (what a
    /// `classify` op yields), or like the label output, or else an undescribed result.
    func pendingOutputs(_ results: [String: MLTensor]) throws -> PendingOutputs {
        let description = modelDescription
        var pending = PendingOutputs()
        let labelName = description.predictedFeatureName
        let probabilitiesName = description.predictedProbabilitiesName
        let classifierNames = Set([labelName, probabilitiesName].compactMap { $0 })
        let labels = description.labels ?? function.classLabels.map(CoreMLSpec.ClassLabels.strings)
        let names = description.outputOrder.isEmpty ? function.outputNames : description.outputOrder
        for name in names where !(labels != nil && classifierNames.contains(name)) {
            guard let tensor = results[name] else {
                throw MLModelError(.generic, "the program produced no value for output \"\(name)\"")
            }
            let kind: PendingOutputs.Kind =
                switch description.outputDescriptionsByName[name]?.type {
                case .double: .double
                case .int64: .int64
                case .image:
                    .image(description.outputDescriptionsByName[name]?.imageConstraint?.colorLayout ?? .rgb)
                default:
                    .multiArray(description.outputDescriptionsByName[name]?.multiArrayConstraint?.dataType ?? .float32)
                }
            // Core ML has no rank-0 multi-arrays: a scalar result is delivered as shape [1].
            pending.features.append((name, kind, tensor.rank == 0 ? tensor.reshaped(to: [1]) : tensor))
        }
        if let labels {
            let count = labels.count
            let candidates = [probabilitiesName, labelName].compactMap { $0 }
            let described = Set(names)
            guard
                let probabilities = candidates.lazy.compactMap({ results[$0] }).first(where: { $0.scalarCount == count }
                )
                    ?? results.first(where: { !described.contains($0.key) && $0.value.scalarCount == count })?.value
            else {
                throw MLModelError(
                    .generic, "the classifier's program produced no probabilities for its \(count) class labels")
            }
            pending.classifier = (probabilities, labels, labelName, probabilitiesName)
        }
        return pending
    }
}

extension CoreMLSpec.ClassLabels {
    /// The number of labels.
    var count: Int {
        switch self {
        case .strings(let labels): labels.count
        case .int64s(let labels): labels.count
        }
    }
}
