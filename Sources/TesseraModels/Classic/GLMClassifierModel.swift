import Foundation

/// `glmClassifier`: logistic (or probit) regression.
///
/// With two classes and one weight vector, `p(class 1) = transform(w·x + b)` and
/// `p(class 0) = 1 − p(class 1)`. With one weight vector per class (`OneVsRest`), each class
/// gets `transform(w_c·x + b_c)` and the values are normalized to sum to 1, as
/// scikit-learn's one-vs-rest `predict_proba` does. The label is the most probable class.
struct GLMClassifierModel: ClassicModel {
    let interface: ClassicInterface
    let reader: FeatureVectorReader
    let weights: [Double]
    let offsets: [Double]
    let transform: LinearTransform
    let outputs: ClassifierOutputs

    init(_ spec: CoreMLSpec.GLMClassifier, _ interface: ClassicInterface, file: String) throws {
        self.interface = interface
        let width: Int
        (weights, offsets, width) = try LinearFunctions.check(spec.weights, spec.offsets, interface, file: file)
        guard let transform = LinearTransform(classifier: spec.transform) else {
            throw interface.invalid("unknown postEvaluationTransform \(spec.transform)", file: file)
        }
        self.transform = transform
        outputs = try ClassifierOutputs(labels: spec.labels, interface: interface, file: file)
        let classes = spec.labels.count
        guard offsets.count == classes || (classes == 2 && offsets.count == 1) else {
            throw interface.invalid(
                "the model has \(offsets.count) weight rows for \(classes) class labels (it needs one per class, "
                    + "or one for two classes)", file: file)
        }
        reader = try FeatureVectorReader(interface, exactWidth: width, file: file)
    }

    func predict(_ row: any MLFeatureProvider) throws -> [String: MLFeatureValue] {
        try predict(batch: [row])[0]
    }

    func predict(batch rows: [any MLFeatureProvider]) throws -> [[String: MLFeatureValue]] {
        let (matrix, _) = try reader.readMatrix(rows, interface)
        let functions = offsets.count
        let values = LinearFunctions.evaluate(matrix, rows: rows.count, weights: weights, offsets: offsets)
        let classes = outputs.labels.count
        var probabilities = [Double](repeating: 0, count: classes)
        return (0..<rows.count).map { row in
            if functions == 1 {
                let p = transform.apply(values[row])
                probabilities[0] = 1 - p
                probabilities[1] = p
            } else {
                var sum = 0.0
                for c in 0..<classes {
                    probabilities[c] = transform.apply(values[row * functions + c])
                    sum += probabilities[c]
                }
                if sum > 0 { for c in 0..<classes { probabilities[c] /= sum } }
            }
            return probabilities.withUnsafeBufferPointer { outputs.features(probabilities: $0) }
        }
    }
}
