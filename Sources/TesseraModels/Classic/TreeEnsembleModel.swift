import Foundation

/// `treeEnsembleRegressor` and `treeEnsembleClassifier`: the sum of every tree's leaf
/// values plus the base prediction, then the post-evaluation transform.
///
/// A regressor writes the values (a double for one dimension, a multi-array otherwise). A
/// classifier turns them into class probabilities: `NoTransform` normalizes them to sum to 1
/// (a random forest's vote counts become its average; one value for two classes is
/// `p(class 1)`), `Classification_SoftMax` normalizes them with
/// a softmax, `Regression_Logistic` applies the logistic function (one value for two
/// classes: `p(class 1)`), `Classification_SoftMaxWithZeroClassReference` is a softmax over
/// `[0, v…]`. The label is the most probable class. A batch evaluates all rows in one pass
/// (``TreeEnsembleForest/accumulate(_:rows:width:dimensions:into:)``).
struct TreeEnsembleModel: ClassicModel {
    let interface: ClassicInterface
    let reader: FeatureVectorReader
    let forest: TreeEnsembleForest
    let dimensions: Int
    let base: [Double]
    let transform: Int32
    let outputs: ClassifierOutputs?
    let output: MLFeatureDescription?

    init(_ spec: CoreMLSpec.TreeEnsemble, _ interface: ClassicInterface, file: String) throws {
        self.interface = interface
        dimensions = Int(clamping: max(spec.dimensions, 1))
        guard spec.basePrediction.isEmpty || spec.basePrediction.count == dimensions else {
            throw interface.invalid(
                "basePredictionValue has \(spec.basePrediction.count) values for \(dimensions) prediction dimensions",
                file: file)
        }
        base = spec.basePrediction.isEmpty ? [Double](repeating: 0, count: dimensions) : spec.basePrediction
        guard (0...3).contains(spec.transform) else {
            throw interface.invalid("unknown postEvaluationTransform \(spec.transform)", file: file)
        }
        transform = spec.transform
        forest = try TreeEnsembleForest(spec, dimensions: dimensions, interface, file: file)
        reader = try FeatureVectorReader(interface, exactWidth: nil, file: file)
        if let width = reader.width, width < forest.requiredWidth {
            throw interface.invalid(
                "a tree branches on feature index \(forest.requiredWidth - 1), but the model's input has \(width) values",
                file: file)
        }
        if spec.isClassifier {
            let labels = spec.labels ?? .strings([])
            let outputs = try ClassifierOutputs(labels: labels, interface: interface, file: file)
            let classes = labels.count
            let fits =
                switch spec.transform {
                case 3: dimensions == classes - 1
                case 1: dimensions == classes
                default: dimensions == classes || (classes == 2 && dimensions == 1)
                }
            guard fits else {
                throw interface.invalid(
                    "\(dimensions) prediction dimensions do not fit \(classes) class labels with transform "
                        + "\(spec.transform)", file: file)
            }
            self.outputs = outputs
            output = nil
        } else {
            outputs = nil
            output = try interface.singleOutput(file: file)
        }
    }

    func predict(_ row: any MLFeatureProvider) throws -> [String: MLFeatureValue] {
        try predict(batch: [row])[0]
    }

    func predict(batch rows: [any MLFeatureProvider]) throws -> [[String: MLFeatureValue]] {
        let (matrix, width) = try reader.readMatrix(rows, interface)
        guard width >= forest.requiredWidth else {
            throw interface.inputError(
                "the input holds \(width) values, but the trees read feature index \(forest.requiredWidth - 1)")
        }
        var values = [Double](repeating: 0, count: rows.count * dimensions)
        for row in 0..<rows.count { for d in 0..<dimensions { values[row * dimensions + d] = base[d] } }
        matrix.withUnsafeBufferPointer { x in
            values.withUnsafeMutableBufferPointer { out in
                forest.accumulate(
                    x.baseAddress!, rows: rows.count, width: width, dimensions: dimensions, into: out.baseAddress!)
            }
        }
        if outputs == nil, dimensions == 1, let output, output.type == .double {
            return values.map { [output.name: MLFeatureValue(double: $0)] }
        }
        return (0..<rows.count).map { row in
            let slice = Array(values[row * dimensions..<(row + 1) * dimensions])
            guard let outputs else { return [output!.name: .numeric(slice, as: output)] }
            let probabilities = Self.probabilities(slice, transform: transform, classes: outputs.labels.count)
            return probabilities.withUnsafeBufferPointer { outputs.features(probabilities: $0) }
        }
    }

    /// A classifier's class probabilities from its summed values.
    static func probabilities(_ values: [Double], transform: Int32, classes: Int) -> [Double] {
        switch transform {
        case 1: return softmax(values)
        case 3: return softmax([0] + values)
        case 2:
            let logistic = values.map { 1 / (1 + exp(-$0)) }
            return classes == 2 && values.count == 1 ? [1 - logistic[0], logistic[0]] : logistic
        default:
            if classes == 2 && values.count == 1 { return [1 - values[0], values[0]] }
            let sum = values.reduce(0, +)
            return sum > 0 ? values.map { $0 / sum } : values
        }
    }

    static func softmax(_ values: [Double]) -> [Double] {
        let largest = values.max() ?? 0
        let exps = values.map { exp($0 - largest) }
        let sum = exps.reduce(0, +)
        return exps.map { $0 / sum }
    }
}
