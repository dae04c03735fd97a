import Foundation
import TesseraModels
import TesseraMultiArray

extension MLModelDescription {
    /// A value for every input of the model, as the `package` fuzz target predicts on them and
    /// the tests replaying its findings do: multi-arrays of the default shape filled with 0.5
    /// (at most 4,096 elements), 1 for an int64, 0.5 for a double, "a" for a string, a
    /// one-entry dictionary; `nil` when an input is of another kind (image, sequence) or
    /// larger, so the prediction is skipped.
    ///
    /// ```swift
    /// if let inputs = model.modelDescription.smallInputs {
    ///     _ = try? model.prediction(from: MLDictionaryFeatureProvider(features: inputs))
    /// }
    /// ```
    package var smallInputs: [String: MLFeatureValue]? {
        var inputs: [String: MLFeatureValue] = [:]
        for (name, input) in inputDescriptionsByName {
            switch input.type {
            case .int64: inputs[name] = MLFeatureValue(int64: 1)
            case .double: inputs[name] = MLFeatureValue(double: 0.5)
            case .string: inputs[name] = MLFeatureValue(string: "a")
            case .dictionary:
                let key: AnyHashable = input.dictionaryConstraint?.keyType == .int64 ? AnyHashable(Int64(1)) : "a"
                guard let value = try? MLFeatureValue(dictionary: [key: NSNumber(value: 0.5)]) else { return nil }
                inputs[name] = value
            case .multiArray:
                guard let constraint = input.multiArrayConstraint else { return nil }
                let shape = constraint.shape.map(\.intValue)
                guard shape.allSatisfy({ $0 > 0 && $0 <= 4096 }),
                    shape.reduce(1, { $0.multipliedReportingOverflow(by: $1).partialValue }) <= 4096,
                    let array = try? MLMultiArray(shape: constraint.shape, dataType: constraint.dataType)
                else { return nil }
                for index in 0..<array.count { array[index] = NSNumber(value: 0.5) }
                inputs[name] = MLFeatureValue(multiArray: array)
            default: return nil
            }
        }
        return inputs
    }
}
