import Foundation

/// `supportVectorClassifier`: libsvm's one-vs-one classifier, evaluated as libsvm's
/// `svm_predict_values` and `svm_predict_probability` do.
///
/// For each class pair `(i, j)`, `i < j`, the decision value is
/// `Σ_{sv of class i} coef[j−1]·K + Σ_{sv of class j} coef[i]·K − ρ_p`; a positive value
/// votes for `i`. Without Platt parameters the label is the class with most votes (the first
/// on ties). With `probA`/`probB`, each pair's probability is
/// `1 / (1 + exp(A·d + B))` clamped to `[1e-7, 1 − 1e-7]`, the classes' probabilities come
/// from libsvm's pairwise coupling (the iterative method of Wu, Lin and Weng), and the label
/// is the most probable class.
struct SupportVectorClassifierModel: ClassicModel {
    let interface: ClassicInterface
    let reader: FeatureVectorReader
    let kernel: SupportVectorKernel
    let starts: [Int]
    let counts: [Int]
    /// `(classes − 1) × supportVectors`, row-major.
    let coefficients: [Double]
    let rho: [Double]
    let probA: [Double]
    let probB: [Double]
    let outputs: ClassifierOutputs

    init(_ spec: CoreMLSpec.SupportVectorClassifier, _ interface: ClassicInterface, file: String) throws {
        self.interface = interface
        outputs = try ClassifierOutputs(labels: spec.labels, interface: interface, file: file)
        let classes = spec.labels.count
        let declared = try FeatureVectorReader(interface, exactWidth: nil, file: file).width
        let kernel = try SupportVectorKernel(spec.kernel, spec.supportVectors, width: declared, interface, file: file)
        self.kernel = kernel
        let pairs = classes * (classes - 1) / 2
        guard spec.supportVectorsPerClass.count == classes else {
            throw interface.invalid(
                "numberOfSupportVectorsPerClass has \(spec.supportVectorsPerClass.count) entries for \(classes) "
                    + "classes", file: file)
        }
        counts = spec.supportVectorsPerClass.map(Int.init)
        guard counts.allSatisfy({ $0 >= 0 }), counts.reduce(0, +) == kernel.count else {
            throw interface.invalid(
                "numberOfSupportVectorsPerClass sums to \(counts.reduce(0, +)) support vectors, but the model "
                    + "has \(kernel.count)", file: file)
        }
        var starts = [0]
        for count in counts.dropLast() { starts.append(starts.last! + count) }
        self.starts = starts
        guard spec.coefficients.count == classes - 1,
            spec.coefficients.allSatisfy({ $0.count == kernel.count })
        else {
            throw interface.invalid(
                "the coefficients have \(spec.coefficients.count) rows of \(spec.coefficients.map(\.count)) "
                    + "values, but \(classes) classes and \(kernel.count) support vectors need \(classes - 1) rows of "
                    + "\(kernel.count)", file: file)
        }
        coefficients = spec.coefficients.flatMap { $0 }
        guard spec.rho.count == pairs else {
            throw interface.invalid("the model has \(spec.rho.count) rho values for \(pairs) class pairs", file: file)
        }
        rho = spec.rho
        guard (spec.probA.isEmpty && spec.probB.isEmpty) || (spec.probA.count == pairs && spec.probB.count == pairs)
        else {
            throw interface.invalid(
                "probA and probB have \(spec.probA.count) and \(spec.probB.count) values for \(pairs) class pairs",
                file: file)
        }
        probA = spec.probA
        probB = spec.probB
        reader = try FeatureVectorReader(interface, exactWidth: kernel.width, file: file)
    }

    func predict(_ row: any MLFeatureProvider) throws -> [String: MLFeatureValue] {
        let x = try reader.read(row, interface)
        let classes = counts.count
        var k = [Double](repeating: 0, count: kernel.count)
        x.withUnsafeBufferPointer { kernel.evaluate($0.baseAddress!, into: &k) }
        var decisions: [Double] = []
        var votes = [Int](repeating: 0, count: classes)
        let l = kernel.count
        for i in 0..<classes {
            for j in (i + 1)..<max(classes, i + 1) {
                var sum = 0.0
                for s in 0..<counts[i] { sum += coefficients[(j - 1) * l + starts[i] + s] * k[starts[i] + s] }
                for s in 0..<counts[j] { sum += coefficients[i * l + starts[j] + s] * k[starts[j] + s] }
                sum -= rho[decisions.count]
                decisions.append(sum)
                if sum > 0 { votes[i] += 1 } else { votes[j] += 1 }
            }
        }
        guard !probA.isEmpty else {
            var best = 0
            for c in 1..<classes where votes[c] > votes[best] { best = c }
            return outputs.features(probabilities: nil, chosen: best)
        }
        let probabilities = Self.probabilities(decisions, probA: probA, probB: probB, classes: classes)
        return probabilities.withUnsafeBufferPointer { outputs.features(probabilities: $0) }
    }

    /// libsvm's `svm_predict_probability` from the pairwise decision values.
    static func probabilities(_ decisions: [Double], probA: [Double], probB: [Double], classes k: Int) -> [Double] {
        let minimum = 1e-7
        var pairwise = [[Double]](repeating: [Double](repeating: 0, count: k), count: k)
        var p = 0
        for i in 0..<k {
            for j in (i + 1)..<max(k, i + 1) {
                let value = min(max(sigmoid(decisions[p], probA[p], probB[p]), minimum), 1 - minimum)
                pairwise[i][j] = value
                pairwise[j][i] = 1 - value
                p += 1
            }
        }
        if k == 2 { return [pairwise[0][1], pairwise[1][0]] }
        return coupled(pairwise, k)
    }

    /// libsvm's `sigmoid_predict`, written to avoid overflow.
    static func sigmoid(_ decision: Double, _ a: Double, _ b: Double) -> Double {
        let fApB = decision * a + b
        return fApB >= 0 ? exp(-fApB) / (1 + exp(-fApB)) : 1 / (1 + exp(fApB))
    }

    /// libsvm's `multiclass_probability`: pairwise coupling by fixed-point iteration.
    static func coupled(_ r: [[Double]], _ k: Int) -> [Double] {
        var p = [Double](repeating: 1 / Double(k), count: k)
        var q = [[Double]](repeating: [Double](repeating: 0, count: k), count: k)
        var qp = [Double](repeating: 0, count: k)
        let maxIterations = max(100, k)
        let eps = 0.005 / Double(k)
        for t in 0..<k {
            for j in 0..<t {
                q[t][t] += r[j][t] * r[j][t]
                q[t][j] = q[j][t]
            }
            for j in (t + 1)..<max(k, t + 1) {
                q[t][t] += r[j][t] * r[j][t]
                q[t][j] = -r[j][t] * r[t][j]
            }
        }
        for _ in 0..<maxIterations {
            var pqp = 0.0
            for t in 0..<k {
                qp[t] = 0
                for j in 0..<k { qp[t] += q[t][j] * p[j] }
                pqp += p[t] * qp[t]
            }
            var maxError = 0.0
            for t in 0..<k { maxError = max(maxError, abs(qp[t] - pqp)) }
            if maxError < eps { break }
            for t in 0..<k {
                let diff = (-qp[t] + pqp) / q[t][t]
                p[t] += diff
                pqp = (pqp + diff * (diff * q[t][t] + 2 * qp[t])) / (1 + diff) / (1 + diff)
                for j in 0..<k {
                    qp[j] = (qp[j] + diff * q[t][j]) / (1 + diff)
                    p[j] /= (1 + diff)
                }
            }
        }
        return p
    }
}
