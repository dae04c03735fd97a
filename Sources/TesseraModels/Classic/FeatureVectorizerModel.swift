import Foundation

/// `featureVectorizer`: concatenates the named inputs, each a number (one element), a
/// multi-array of its declared width, or a sparse dictionary `{int64 position: value}` (a
/// sparse one-hot encoder's output) of that width, into one multi-array.
struct FeatureVectorizerModel: ClassicModel {
    let interface: ClassicInterface
    let columns: [(feature: MLFeatureDescription, width: Int)]
    let output: MLFeatureDescription

    init(_ columns: [CoreMLSpec.FeatureVectorizerColumn], _ interface: ClassicInterface, file: String) throws {
        self.interface = interface
        self.columns = try columns.map { column in
            guard let feature = interface.inputs.first(where: { $0.name == column.name }) else {
                throw interface.invalid("input column \"\(column.name)\" is not one of the model's inputs", file: file)
            }
            return (feature, Int(clamping: column.dimensions))
        }
        output = try interface.singleOutput(file: file)
    }

    func predict(_ row: any MLFeatureProvider) throws -> [String: MLFeatureValue] {
        var vector: [Double] = []
        for (feature, width) in columns {
            guard let value = try interface.value(of: feature, in: row) else {
                vector.append(contentsOf: repeatElement(Double.nan, count: width))
                continue
            }
            if case .dictionary(let entries) = value.storage {
                var dense = [Double](repeating: 0, count: width)
                for (key, number) in entries {
                    guard let position = key.base as? Int64, position >= 0, position < width else {
                        throw interface.inputError(
                            "input \"\(feature.name)\" has key \(key), which is not a position in its \(width) columns")
                    }
                    dense[Int(position)] = number.doubleValue
                }
                vector.append(contentsOf: dense)
                continue
            }
            guard let elements = value.doubleElements else {
                throw interface.inputError(
                    "input \"\(feature.name)\" is a \(value.type) value, but the model expects numbers")
            }
            guard elements.count == width else {
                throw interface.inputError(
                    "input \"\(feature.name)\" has \(elements.count) values, but the column is \(width) wide")
            }
            vector.append(contentsOf: elements)
        }
        return [output.name: .numeric(vector, as: output)]
    }
}
