import Foundation

/// `categoricalMapping`: a string → int64 or int64 → string lookup; a key not in the table
/// gives the model's default value, or throws when it has none.
struct CategoricalMappingModel: ClassicModel {
    let interface: ClassicInterface
    let input: MLFeatureDescription
    let output: MLFeatureDescription
    let spec: CoreMLSpec.CategoricalMapping

    init(_ spec: CoreMLSpec.CategoricalMapping, _ interface: ClassicInterface, file: String) throws {
        self.interface = interface
        self.spec = spec
        input = try interface.singleInput(file: file)
        output = try interface.singleOutput(file: file)
        if spec.stringToInt64 != nil, input.type != .string {
            throw interface.invalid(
                "the map's keys are strings, but input \"\(input.name)\" is a \(input.type)", file: file)
        }
        guard spec.stringToInt64 != nil || spec.int64ToString != nil else {
            throw interface.invalid("the model has no mapping", file: file)
        }
    }

    func predict(_ row: any MLFeatureProvider) throws -> [String: MLFeatureValue] {
        let value = try interface.value(of: input, in: row)
        if let table = spec.stringToInt64 {
            guard let value, case .string(let key) = value.storage else {
                throw interface.inputError("input \"\(input.name)\" is not a string")
            }
            guard let mapped = table[key] ?? spec.defaultInt64 else {
                throw interface.inputError("input \"\(input.name)\" is \"\(key)\", which the map does not hold")
            }
            return [output.name: MLFeatureValue(int64: mapped)]
        }
        guard let value, let key = value.integerValue else {
            throw interface.inputError("input \"\(input.name)\" is not an integer")
        }
        guard let mapped = spec.int64ToString?[key] ?? spec.defaultString else {
            throw interface.inputError("input \"\(input.name)\" is \(key), which the map does not hold")
        }
        return [output.name: MLFeatureValue(string: mapped)]
    }
}
