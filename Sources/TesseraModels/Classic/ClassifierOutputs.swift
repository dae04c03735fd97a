import Foundation
import TesseraMultiArray

/// How a classic classifier writes its results: the predicted label under the label output
/// (a string or an int64, as the labels are) and the label → probability dictionary under
/// the probabilities output (or a multi-array in label order, when the description declares
/// one).
struct ClassifierOutputs: Sendable {
    let labels: CoreMLSpec.ClassLabels
    let labelName: String?
    let probabilitiesName: String?
    /// The probabilities output, when it is declared as a multi-array.
    let probabilitiesArray: MLFeatureDescription?

    /// Plans the outputs of a classifier with `labels`.
    ///
    /// - Throws: ``ModelFormatError`` when the model has no labels, or its label output's type
    ///   (string or int64) is not the labels' type.
    init(labels: CoreMLSpec.ClassLabels, interface: ClassicInterface, file: String) throws {
        guard labels.count > 0 else { throw interface.invalid("the classifier has no class labels", file: file) }
        self.labels = labels
        labelName = interface.labelName
        probabilitiesName = interface.probabilitiesName
        let probabilities = interface.probabilitiesName.flatMap(interface.output)
        probabilitiesArray = probabilities?.type == .multiArray ? probabilities : nil
        if let name = labelName, let output = interface.output(name) {
            let expected: MLFeatureType =
                if case .strings = labels { .string } else { .int64 }
            guard output.type == expected else {
                throw interface.invalid(
                    "the label output \"\(name)\" is a \(output.type), but the class labels are \(expected)s",
                    file: file)
            }
        }
    }

    /// The index of the largest probability (the first on ties).
    static func argmax(_ values: UnsafeBufferPointer<Double>) -> Int {
        var best = 0
        for index in values.indices where values[index] > values[best] { best = index }
        return best
    }

    /// The label at `index` as a feature value.
    func label(at index: Int) -> MLFeatureValue {
        switch labels {
        case .strings(let values): MLFeatureValue(string: values[index])
        case .int64s(let values): MLFeatureValue(int64: values[index])
        }
    }

    /// The outputs for one row: `probabilities` in label order (or `nil` for a classifier
    /// without them), the label at `chosen` (the most probable when `nil`).
    func features(probabilities: UnsafeBufferPointer<Double>?, chosen: Int? = nil) -> [String: MLFeatureValue] {
        var features: [String: MLFeatureValue] = [:]
        let index = chosen ?? probabilities.map(Self.argmax) ?? 0
        if let labelName { features[labelName] = label(at: index) }
        if let probabilitiesName, let probabilities {
            if let probabilitiesArray {
                features[probabilitiesName] = .numeric(Array(probabilities), as: probabilitiesArray)
            } else {
                var dictionary: [AnyHashable: NSNumber] = [:]
                switch labels {
                case .strings(let values):
                    for (key, p) in zip(values, probabilities) { dictionary[AnyHashable(key)] = NSNumber(value: p) }
                case .int64s(let values):
                    for (key, p) in zip(values, probabilities) { dictionary[AnyHashable(key)] = NSNumber(value: p) }
                }
                features[probabilitiesName] = MLFeatureValue(storage: .dictionary(dictionary))
            }
        }
        return features
    }
}
