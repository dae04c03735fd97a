import Foundation

/// `normalizer`: divides a vector by its L1 norm (sum of absolute values), L2 norm or L∞
/// norm (largest absolute value); a zero vector stays zero.
struct NormalizerModel: ClassicModel {
    let interface: ClassicInterface
    let input: MLFeatureDescription
    let output: MLFeatureDescription
    let norm: CoreMLSpec.NormType

    init(_ norm: CoreMLSpec.NormType, _ interface: ClassicInterface, file: String) throws {
        self.interface = interface
        self.norm = norm
        input = try interface.singleInput(file: file)
        output = try interface.singleOutput(file: file)
    }

    func predict(_ row: any MLFeatureProvider) throws -> [String: MLFeatureValue] {
        guard let value = try interface.value(of: input, in: row), let x = value.doubleElements else {
            throw interface.inputError(
                "input \"\(input.name)\" holds no numbers; the model expects \(input.expectation)")
        }
        let size: Double =
            switch norm {
            case .l1: x.reduce(0) { $0 + abs($1) }
            case .l2: x.reduce(0) { $0 + $1 * $1 }.squareRoot()
            case .lMax: x.reduce(0) { max($0, abs($1)) }
            }
        return [output.name: .numeric(size == 0 ? x : x.map { $0 / size }, as: output)]
    }
}
