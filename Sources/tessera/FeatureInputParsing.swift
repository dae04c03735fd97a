import Tessera

/// How `tessera predict` reads `--input NAME=VALUE`.
///
/// - `FILE.npy`: a multi-array (NumPy's format).
/// - `@FILE.json`: JSON: an object of numbers is a dictionary (string keys, or int64 keys
///   when the input is keyed by int64), a number a double, a string a string, an array of
///   numbers a float64 multi-array (nested arrays give its shape), an array of strings a
///   sequence.
/// - anything else: a literal read as the input's declared type: a double or int64 number
///   (`age=3.5`), a string (`sex=male`), or comma-separated numbers for a multi-array.
enum FeatureInputParsing {
    static func value(_ text: String, for feature: MLFeatureDescription?, name: String) throws -> MLFeatureValue {
        if text.hasSuffix(".npy") {
            do {
                return MLFeatureValue(multiArray: try NumPyFile.read(URL(fileURLWithPath: text)))
            } catch {
                throw CLIError(error.description)
            }
        }
        if text.hasPrefix("@") {
            let url = URL(fileURLWithPath: String(text.dropFirst()))
            guard let data = try? Data(contentsOf: url),
                let json = try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
            else { throw CLIError("--input \(name): cannot read JSON from \(url.path)") }
            return try value(json: json, for: feature, name: name)
        }
        switch feature?.type {
        case .int64?:
            guard let number = Int64(text) else { throw CLIError("--input \(name)=\(text): expected an integer") }
            return MLFeatureValue(int64: number)
        case .double?:
            guard let number = Double(text) else { throw CLIError("--input \(name)=\(text): expected a number") }
            return MLFeatureValue(double: number)
        case .multiArray?:
            let numbers = text.split(separator: ",").compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }
            guard !numbers.isEmpty else { throw CLIError("--input \(name)=\(text): expected numbers or FILE.npy") }
            let shape = feature?.multiArrayConstraint?.shape.map(\.intValue) ?? []
            let fits = !shape.isEmpty && shape.reduce(1, *) == numbers.count
            return MLFeatureValue(
                multiArray: MLMultiArray(MLShapedArray<Double>(scalars: numbers, shape: fits ? shape : [numbers.count]))
            )
        default:
            if feature?.type != .string, let number = Double(text) { return MLFeatureValue(double: number) }
            return MLFeatureValue(string: text)
        }
    }

    static func value(json: Any, for feature: MLFeatureDescription?, name: String) throws -> MLFeatureValue {
        switch json {
        case let object as [String: Any]:
            let intKeys = feature?.dictionaryConstraint?.keyType == .int64
            var entries: [AnyHashable: NSNumber] = [:]
            for (key, value) in object {
                guard let number = value as? NSNumber else {
                    throw CLIError("--input \(name): dictionary value for \"\(key)\" is not a number")
                }
                guard !intKeys || Int64(key) != nil else {
                    throw CLIError("--input \(name): the model wants int64 keys, and \"\(key)\" is not one")
                }
                entries[intKeys ? AnyHashable(Int64(key)!) : AnyHashable(key)] = NSNumber(value: number.doubleValue)
            }
            do {
                return try MLFeatureValue(dictionary: entries)
            } catch let error as MLModelError {
                throw CLIError("--input \(name): \(error.message)")
            }
        case let strings as [String]: return MLFeatureValue(sequence: MLSequence(strings: strings))
        case let array as [Any]:
            var shape: [Int] = []
            var numbers: [Double] = []
            try flatten(array, depth: 0, shape: &shape, into: &numbers, name: name)
            return MLFeatureValue(multiArray: MLMultiArray(MLShapedArray<Double>(scalars: numbers, shape: shape)))
        case let string as String: return MLFeatureValue(string: string)
        case let number as NSNumber:
            return feature?.type == .int64
                ? MLFeatureValue(int64: number.int64Value) : MLFeatureValue(double: number.doubleValue)
        default: throw CLIError("--input \(name): unsupported JSON value")
        }
    }

    /// Flattens nested JSON arrays of numbers row-major, recording the shape.
    private static func flatten(
        _ array: [Any], depth: Int, shape: inout [Int], into numbers: inout [Double], name: String
    ) throws {
        if shape.count == depth { shape.append(array.count) }
        guard shape[depth] == array.count else { throw CLIError("--input \(name): ragged JSON array") }
        for element in array {
            if let nested = element as? [Any] {
                try flatten(nested, depth: depth + 1, shape: &shape, into: &numbers, name: name)
            } else if let number = element as? NSNumber {
                numbers.append(number.doubleValue)
            } else {
                throw CLIError("--input \(name): JSON array elements must be numbers")
            }
        }
    }
}
