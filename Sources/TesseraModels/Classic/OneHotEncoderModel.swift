import Foundation

/// `oneHotEncoder`: a string or integer category becomes a vector with 1 at the category's
/// position: a dense multi-array, or (`outputSparse`) a dictionary `{position: 1}`.
///
/// An unknown category throws, or (`IgnoreUnknown`) gives all zeros. A double input is taken
/// as an integer category when it is integral (Core ML's conversion).
struct OneHotEncoderModel: ClassicModel {
    let interface: ClassicInterface
    let input: MLFeatureDescription
    let output: MLFeatureDescription
    let strings: [String: Int]
    let integers: [Int64: Int]
    let count: Int
    let sparse: Bool
    let ignoreUnknown: Bool

    init(_ spec: CoreMLSpec.OneHotEncoder, _ interface: ClassicInterface, file: String) throws {
        self.interface = interface
        input = try interface.singleInput(file: file)
        output = try interface.singleOutput(file: file)
        switch spec.categories {
        case .strings(let values):
            guard input.type == .string else {
                throw interface.invalid(
                    "the categories are strings, but input \"\(input.name)\" is a \(input.type)", file: file)
            }
            strings = Dictionary(values.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
            integers = [:]
            count = values.count
        case .int64s(let values):
            guard [.int64, .double, .multiArray].contains(input.type) else {
                throw interface.invalid(
                    "the categories are int64s, but input \"\(input.name)\" is a \(input.type)", file: file)
            }
            integers = Dictionary(values.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
            strings = [:]
            count = values.count
        }
        sparse = spec.outputSparse
        ignoreUnknown = spec.ignoreUnknown
    }

    func predict(_ row: any MLFeatureProvider) throws -> [String: MLFeatureValue] {
        let value = try interface.value(of: input, in: row)
        let position: Int?
        if !strings.isEmpty || integers.isEmpty {
            guard let value, case .string(let category) = value.storage else {
                throw interface.inputError(
                    "input \"\(input.name)\" is a \(value?.type ?? input.type) value, but the categories are strings")
            }
            position = strings[category]
            if position == nil && !ignoreUnknown {
                throw interface.inputError("input \"\(input.name)\" is \"\(category)\", which is not a category")
            }
        } else {
            guard let value, let category = value.integerValue else {
                throw interface.inputError(
                    "input \"\(input.name)\" is \(value.map { "\($0)" } ?? "missing"), but the categories are int64s")
            }
            position = integers[category]
            if position == nil && !ignoreUnknown {
                throw interface.inputError("input \"\(input.name)\" is \(category), which is not a category")
            }
        }
        if sparse || output.type == .dictionary {
            var dictionary: [AnyHashable: NSNumber] = [:]
            if let position { dictionary[AnyHashable(Int64(position))] = NSNumber(value: 1.0) }
            return [output.name: MLFeatureValue(storage: .dictionary(dictionary))]
        }
        var vector = [Double](repeating: 0, count: count)
        if let position { vector[position] = 1 }
        return [output.name: .numeric(vector, as: output)]
    }
}
