import Foundation

/// `glmClassifier`: logistic (or probit) regression.
///
/// With two classes and one weight vector, `p(class 1) = transform(w·x + b)` and
/// `p(class 0) = 1 − p(class 1)`. With one weight vector per class (`OneVsRest`), each class
/// gets `transform(w_c·x + b_c)` and the values are normalized to sum to 1, as
/// scikit-learn's one-vs-rest `predict_proba` does. With `K − 1` weight vectors for `K > 2`
/// classes (`ReferenceClass`, as Turi Create writes multinomial logistic regression), the
/// first class is the reference: `p_0 ∝ 1`, `p_k ∝ exp(w_k·x + b_k)`, a softmax over
/// `[0, z_1, …, z_{K−1}]` (the two-class logit generalized; probit is two-class only). The
/// label is the most probable class.
struct GLMClassifierModel: ClassicModel {
    let interface: ClassicInterface
    let reader: FeatureVectorReader
    let weights: [Double]
    let offsets: [Double]
    let transform: LinearTransform
    let outputs: ClassifierOutputs
    /// `K − 1` weight vectors for `K > 2` classes, class 0 the reference.
    let referenceClass: Bool

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
        guard classes >= 2 else {
            throw interface.invalid(
                "a GLM classifier needs at least two class labels; this one has \(classes)", file: file)
        }
        referenceClass = classes > 2 && offsets.count == classes - 1 && spec.classEncoding == 0
        guard offsets.count == classes || (classes == 2 && offsets.count == 1) || referenceClass else {
            throw interface.invalid(
                "the model has \(offsets.count) weight rows for \(classes) class labels (it needs one per class, "
                    + "one for two classes, or one fewer than the classes with ReferenceClass encoding)", file: file)
        }
        if referenceClass, transform != .logit {
            throw interface.invalid(
                "the Probit transform takes two classes; this ReferenceClass model has \(classes)", file: file)
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
            if referenceClass {
                // Softmax over [0, z_1, …, z_{K−1}], shifted by the largest for range.
                var largest = 0.0
                for c in 1..<classes { largest = max(largest, values[row * functions + c - 1]) }
                probabilities[0] = exp(-largest)
                var sum = probabilities[0]
                for c in 1..<classes {
                    probabilities[c] = exp(values[row * functions + c - 1] - largest)
                    sum += probabilities[c]
                }
                for c in 0..<classes { probabilities[c] /= sum }
            } else if functions == 1 {
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
