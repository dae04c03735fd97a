import Foundation

/// `dictVectorizer`: a dictionary of numbers becomes a dense multi-array with each known
/// key's value at its position (keys not in the model are ignored, missing keys are 0). A
/// string input counts as `{string: 1}`, as Core ML does for categorical columns.
struct DictVectorizerModel: ClassicModel {
    let interface: ClassicInterface
    let input: MLFeatureDescription
    let output: MLFeatureDescription
    let stringPositions: [String: Int]
    let integerPositions: [Int64: Int]
    let count: Int
    let stringKeys: Bool

    init(_ keys: CoreMLSpec.ClassLabels, _ interface: ClassicInterface, file: String) throws {
        self.interface = interface
        input = try interface.singleInput(file: file)
        output = try interface.singleOutput(file: file)
        switch keys {
        case .strings(let values):
            stringPositions = Dictionary(values.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
            integerPositions = [:]
            stringKeys = true
        case .int64s(let values):
            integerPositions = Dictionary(values.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
            stringPositions = [:]
            stringKeys = false
        }
        count = keys.count
        if let keyType = input.dictionaryConstraint?.keyType, (keyType == .string) != stringKeys {
            throw interface.invalid(
                "the keys are \(stringKeys ? "strings" : "int64s"), but input \"\(input.name)\" is keyed by "
                    + "\(keyType)", file: file)
        }
    }

    func predict(_ row: any MLFeatureProvider) throws -> [String: MLFeatureValue] {
        var vector = [Double](repeating: 0, count: count)
        switch try interface.value(of: input, in: row)?.storage {
        case .dictionary(let entries)?:
            for (key, number) in entries {
                let position =
                    switch key.base {
                    case let string as String: stringPositions[string]
                    case let integer as Int64: integerPositions[integer]
                    default: Int?.none
                    }
                if let position { vector[position] = number.doubleValue }
            }
        case .string(let key)? where stringKeys:
            if let position = stringPositions[key] { vector[position] = 1 }
        case nil: break
        case let other?:
            throw interface.inputError(
                "input \"\(input.name)\" is a \(MLFeatureValue(storage: other).type) value, but the model expects a "
                    + "dictionary")
        }
        return [output.name: .numeric(vector, as: output)]
    }
}
