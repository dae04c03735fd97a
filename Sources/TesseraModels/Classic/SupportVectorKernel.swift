import Foundation

/// A support vector machine's kernel over dense float64 support vectors, evaluated as
/// libsvm's `Kernel::k_function` does.
struct SupportVectorKernel: Sendable {
    let kernel: CoreMLSpec.Kernel
    /// `count × width`, row-major.
    let vectors: [Double]
    let count: Int
    let width: Int

    /// Densifies the support vectors. Sparse indices are 1-based (libsvm's); index `i` is
    /// input element `i − 1`.
    ///
    /// - Parameter width: The input width, when the description fixes it.
    /// - Throws: ``ModelFormatError`` for rows of different lengths or indices out of range.
    init(
        _ kernel: CoreMLSpec.Kernel, _ supportVectors: CoreMLSpec.SupportVectors, width declared: Int?,
        _ interface: ClassicInterface, file: String
    ) throws {
        self.kernel = kernel
        switch supportVectors {
        case .dense(let rows):
            let width = rows.first?.count ?? 0
            for (index, row) in rows.enumerated() where row.count != width {
                throw interface.invalid(
                    "support vector \(index) has \(row.count) values, but support vector 0 has \(width)", file: file)
            }
            self.width = width
            vectors = rows.flatMap { $0 }
            count = rows.count
        case .sparse(let rows):
            let largest = rows.flatMap { $0.map { Int($0.index) } }.max() ?? 0
            let width = declared ?? largest
            guard largest <= width else {
                throw interface.invalid(
                    "a sparse support vector has index \(largest), but the input has \(width) values", file: file)
            }
            var dense = [Double](repeating: 0, count: rows.count * width)
            for (row, nodes) in rows.enumerated() {
                for node in nodes {
                    guard node.index >= 1 else {
                        throw interface.invalid(
                            "sparse support vector \(row) has index \(node.index) (indices start at 1)", file: file)
                    }
                    dense[row * width + Int(node.index) - 1] = node.value
                }
            }
            self.width = width
            vectors = dense
            count = rows.count
        }
        guard count > 0 else { throw interface.invalid("the model has no support vectors", file: file) }
    }

    /// `K(x, sv_i)` for every support vector, into `out`.
    func evaluate(_ x: UnsafePointer<Double>, into out: UnsafeMutablePointer<Double>) {
        vectors.withUnsafeBufferPointer { sv in
            for i in 0..<count {
                let v = sv.baseAddress! + i * width
                switch kernel {
                case .linear: out[i] = Self.dot(x, v, width)
                case .rbf(let gamma):
                    var sum = 0.0
                    for j in 0..<width {
                        let d = x[j] - v[j]
                        sum += d * d
                    }
                    out[i] = exp(-gamma * sum)
                case .polynomial(let degree, let c, let gamma):
                    out[i] = Self.power(gamma * Self.dot(x, v, width) + c, Int(degree))
                case .sigmoid(let gamma, let c): out[i] = tanh(gamma * Self.dot(x, v, width) + c)
                }
            }
        }
    }

    static func dot(_ a: UnsafePointer<Double>, _ b: UnsafePointer<Double>, _ n: Int) -> Double {
        var sum = 0.0
        for j in 0..<n { sum += a[j] * b[j] }
        return sum
    }

    /// `base^times` by squaring, as libsvm's `powi`.
    static func power(_ base: Double, _ times: Int) -> Double {
        var result = 1.0
        var tmp = base
        var t = times
        while t > 0 {
            if t % 2 == 1 { result *= tmp }
            tmp *= tmp
            t /= 2
        }
        return result
    }
}

/// `supportVectorRegressor`: `Σ_i α_i K(x, sv_i) − ρ`.
struct SupportVectorRegressorModel: ClassicModel {
    let interface: ClassicInterface
    let reader: FeatureVectorReader
    let kernel: SupportVectorKernel
    let coefficients: [Double]
    let rho: Double
    let output: MLFeatureDescription

    init(_ spec: CoreMLSpec.SupportVectorRegressor, _ interface: ClassicInterface, file: String) throws {
        self.interface = interface
        let declared = try FeatureVectorReader(interface, exactWidth: nil, file: file).width
        kernel = try SupportVectorKernel(spec.kernel, spec.supportVectors, width: declared, interface, file: file)
        guard spec.coefficients.count == kernel.count else {
            throw interface.invalid(
                "the model has \(kernel.count) support vectors but \(spec.coefficients.count) coefficients",
                file: file)
        }
        coefficients = spec.coefficients
        rho = spec.rho
        reader = try FeatureVectorReader(interface, exactWidth: kernel.width, file: file)
        output = try interface.singleOutput(file: file)
    }

    func predict(_ row: any MLFeatureProvider) throws -> [String: MLFeatureValue] {
        let x = try reader.read(row, interface)
        var k = [Double](repeating: 0, count: kernel.count)
        x.withUnsafeBufferPointer { kernel.evaluate($0.baseAddress!, into: &k) }
        var sum = 0.0
        for i in 0..<kernel.count { sum += coefficients[i] * k[i] }
        return [output.name: .numeric([sum - rho], as: output)]
    }
}
