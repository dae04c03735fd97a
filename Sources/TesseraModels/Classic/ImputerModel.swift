import Foundation

/// `imputer`: replaces a missing value with the imputed one. For numbers and multi-arrays a
/// value is missing when it equals the replace value (NaN when the file sets none), element
/// by element against an imputed array; a string equal to the replace string is missing; an
/// absent or undefined input is missing as a whole.
struct ImputerModel: ClassicModel {
    let interface: ClassicInterface
    let input: MLFeatureDescription
    let output: MLFeatureDescription
    let imputed: CoreMLSpec.ImputerValue
    let replace: CoreMLSpec.ImputerValue?

    init(_ spec: CoreMLSpec.Imputer, _ interface: ClassicInterface, file: String) throws {
        self.interface = interface
        input = try interface.singleInput(file: file)
        output = try interface.singleOutput(file: file)
        guard let imputed = spec.imputed else {
            throw interface.invalid("the imputer has no imputed value", file: file)
        }
        self.imputed = imputed
        replace = spec.replace
    }

    func predict(_ row: any MLFeatureProvider) throws -> [String: MLFeatureValue] {
        let value = try interface.value(of: input, in: row)
        return [output.name: try impute(value)]
    }

    private func isMissing(_ x: Double) -> Bool {
        switch replace {
        case .double(let marker)?: x == marker || (marker.isNaN && x.isNaN)
        case .int64(let marker)?: x == Double(marker)
        default: x.isNaN
        }
    }

    private func impute(_ value: MLFeatureValue?) throws -> MLFeatureValue {
        switch (imputed, value?.storage) {
        case (.string(let fill), nil): return MLFeatureValue(string: fill)
        case (.string(let fill), .string(let text)?):
            if case .string(let marker)? = replace, text == marker { return MLFeatureValue(string: fill) }
            return MLFeatureValue(string: text)
        case (.double(let fill), nil): return .numeric([fill], as: output)
        case (.int64(let fill), nil): return .numeric([Double(fill)], as: output)
        case (.doubles(let fill), nil): return .numeric(fill, as: output)
        case (.int64s(let fill), nil): return .numeric(fill.map(Double.init), as: output)
        case (.stringDictionary(let fill), nil):
            return MLFeatureValue(
                storage: .dictionary(fill.reduce(into: [:]) { $0[AnyHashable($1.key)] = NSNumber(value: $1.value) }))
        case (.int64Dictionary(let fill), nil):
            return MLFeatureValue(
                storage: .dictionary(fill.reduce(into: [:]) { $0[AnyHashable($1.key)] = NSNumber(value: $1.value) }))
        case (.stringDictionary, .dictionary?), (.int64Dictionary, .dictionary?): return value!
        case (.double, _), (.int64, _), (.doubles, _), (.int64s, _):
            guard let value, let elements = value.doubleElements else { break }
            let fill: [Double] =
                switch imputed {
                case .double(let x): [x]
                case .int64(let x): [Double(x)]
                case .doubles(let xs): xs
                case .int64s(let xs): xs.map(Double.init)
                default: []
                }
            guard fill.count == 1 || fill.count == elements.count else {
                throw interface.inputError(
                    "input \"\(input.name)\" has \(elements.count) values, but the imputed array has \(fill.count)")
            }
            let filled = elements.enumerated().map { index, x in
                isMissing(x) ? fill[fill.count == 1 ? 0 : index] : x
            }
            return .numeric(filled, as: output)
        default: break
        }
        throw interface.inputError(
            "input \"\(input.name)\" is a \(value?.type ?? input.type) value, which the imputer's value does not fit")
    }
}
