import Foundation

/// `arrayFeatureExtractor`: picks elements of a multi-array (flattened, row-major) by
/// index; one index into a double or int64 output gives that number, otherwise a
/// multi-array of the picked elements.
struct ArrayFeatureExtractorModel: ClassicModel {
    let interface: ClassicInterface
    let input: MLFeatureDescription
    let output: MLFeatureDescription
    let indices: [Int]

    init(_ indices: [Int64], _ interface: ClassicInterface, file: String) throws {
        self.interface = interface
        input = try interface.singleInput(file: file)
        output = try interface.singleOutput(file: file)
        guard !indices.isEmpty else { throw interface.invalid("the model extracts no index", file: file) }
        self.indices = indices.map { Int(clamping: $0) }
        if let shape = input.multiArrayConstraint?.shapeValues, !shape.isEmpty,
            let largest = self.indices.max(), largest >= shape.reduce(1, *)
        {
            throw interface.invalid(
                "extractIndex \(largest) is outside input \"\(input.name)\" of shape \(shape)", file: file)
        }
    }

    func predict(_ row: any MLFeatureProvider) throws -> [String: MLFeatureValue] {
        guard let value = try interface.value(of: input, in: row), case .multiArray(let array) = value.storage else {
            throw interface.inputError(
                "input \"\(input.name)\" is not a multi-array; the model expects \(input.expectation)")
        }
        let x = MLFeatureValue.doubles(of: array)
        guard let largest = indices.max(), largest < x.count else {
            throw interface.inputError(
                "input \"\(input.name)\" has \(x.count) elements, but the model extracts index \(indices.max() ?? 0)")
        }
        return [output.name: .numeric(indices.map { x[$0] }, as: output)]
    }
}
