import Foundation

/// `glmRegressor`: `y_j = transform(Σ_i w_ji·x_i + b_j)` in float64, with no transform, the
/// logistic function (`Logit`) or the normal CDF (`Probit`).
struct GLMRegressorModel: ClassicModel {
    let interface: ClassicInterface
    let reader: FeatureVectorReader
    /// `dimensions × width`, row-major.
    let weights: [Double]
    let offsets: [Double]
    let width: Int
    let transform: LinearTransform
    let output: MLFeatureDescription

    init(_ spec: CoreMLSpec.GLMRegressor, _ interface: ClassicInterface, file: String) throws {
        self.interface = interface
        (weights, offsets, width) = try LinearFunctions.check(spec.weights, spec.offsets, interface, file: file)
        guard let transform = LinearTransform(regressor: spec.transform) else {
            throw interface.invalid("unknown postEvaluationTransform \(spec.transform)", file: file)
        }
        self.transform = transform
        reader = try FeatureVectorReader(interface, exactWidth: width, file: file)
        output = try interface.singleOutput(file: file)
    }

    func predict(_ row: any MLFeatureProvider) throws -> [String: MLFeatureValue] {
        try predict(batch: [row])[0]
    }

    func predict(batch rows: [any MLFeatureProvider]) throws -> [[String: MLFeatureValue]] {
        let (matrix, _) = try reader.readMatrix(rows, interface)
        let dimensions = offsets.count
        var results = LinearFunctions.evaluate(matrix, rows: rows.count, weights: weights, offsets: offsets)
        for index in results.indices { results[index] = transform.apply(results[index]) }
        return (0..<rows.count).map { row in
            let values = Array(results[row * dimensions..<(row + 1) * dimensions])
            return [output.name: .numeric(values, as: output)]
        }
    }
}

/// The transform a linear model applies to each of its values.
enum LinearTransform: Sendable {
    case none, logit, probit

    /// `GLMRegressor.PostEvaluationTransform` (0 none, 1 logit, 2 probit).
    init?(regressor raw: Int32) {
        switch raw {
        case 0: self = .none
        case 1: self = .logit
        case 2: self = .probit
        default: return nil
        }
    }

    /// `GLMClassifier.PostEvaluationTransform` (0 logit, 1 probit).
    init?(classifier raw: Int32) {
        switch raw {
        case 0: self = .logit
        case 1: self = .probit
        default: return nil
        }
    }

    func apply(_ x: Double) -> Double {
        switch self {
        case .none: x
        case .logit: 1 / (1 + exp(-x))
        case .probit: 0.5 * erfc(-x / 2.0.squareRoot())
        }
    }
}

/// Checks and evaluates the linear functions of the GLM models.
enum LinearFunctions {
    /// The weights as one row-major matrix, the offsets (zeros when the file has none), and
    /// the input width.
    ///
    /// - Throws: ``ModelFormatError`` when the rows differ in length or the offsets do not
    ///   match the rows.
    static func check(_ rows: [[Double]], _ offsets: [Double], _ interface: ClassicInterface, file: String) throws
        -> (weights: [Double], offsets: [Double], width: Int)
    {
        guard let width = rows.first?.count, width > 0 else {
            throw interface.invalid("the model has no weights", file: file)
        }
        for (index, row) in rows.enumerated() where row.count != width {
            throw interface.invalid(
                "weights row \(index) has \(row.count) values, but row 0 has \(width)", file: file)
        }
        guard offsets.isEmpty || offsets.count == rows.count else {
            throw interface.invalid(
                "the model has \(rows.count) weight rows but \(offsets.count) offsets", file: file)
        }
        return (rows.flatMap { $0 }, offsets.isEmpty ? [Double](repeating: 0, count: rows.count) : offsets, width)
    }

    /// `matrix (rows × width) · weightsᵀ + offsets`, row-major `rows × offsets.count`, in
    /// float64.
    static func evaluate(_ matrix: [Double], rows: Int, weights: [Double], offsets: [Double]) -> [Double] {
        let dimensions = offsets.count
        let width = weights.count / max(dimensions, 1)
        var out = [Double](repeating: 0, count: rows * dimensions)
        matrix.withUnsafeBufferPointer { x in
            weights.withUnsafeBufferPointer { w in
                out.withUnsafeMutableBufferPointer { y in
                    for row in 0..<rows {
                        let input = x.baseAddress! + row * width
                        for dimension in 0..<dimensions {
                            let weight = w.baseAddress! + dimension * width
                            var sum = 0.0
                            for i in 0..<width { sum += input[i] * weight[i] }
                            y[row * dimensions + dimension] = sum + offsets[dimension]
                        }
                    }
                }
            }
        }
        return out
    }
}
