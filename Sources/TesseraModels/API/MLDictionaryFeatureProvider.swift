import Foundation
import TesseraMultiArray
import TesseraTensor

/// A feature provider backed by a dictionary: the usual way to build a model's input, and
/// what Tessera's models return their outputs in.
///
/// ```swift
/// let input = try MLDictionaryFeatureProvider(dictionary: [
///     "image": MLFeatureValue(multiArray: pixels),
///     "threshold": 0.5,                       // converted to MLFeatureValue(double:)
/// ])
/// input["image"]?.type                        // .multiArray
/// ```
public final class MLDictionaryFeatureProvider: MLFeatureProvider {
    /// The features by name.
    public let dictionary: [String: MLFeatureValue]

    /// Creates a provider from feature values or values convertible to one.
    ///
    /// Accepted values: `MLFeatureValue`; `Int`, `Int64`, `Int32` and other integers
    /// (→ `.int64`); `Double`, `Float` (→ `.double`); `NSNumber` (→ `.int64` when it holds an
    /// integer, `.double` otherwise); `String`; `MLMultiArray`; `MLShapedArray` of `Float`,
    /// `Double`, `Float16`, `Int32` or `Int8` (→ `.multiArray`); `MLSequence`; and
    /// `[AnyHashable: NSNumber]`, `[String: Double]`, `[Int64: Double]` (→ `.dictionary`).
    ///
    /// - Throws: ``MLModelError`` with code `.featureType` naming the feature whose value is of
    ///   any other type.
    public init(dictionary: [String: Any]) throws {
        var features: [String: MLFeatureValue] = [:]
        for (name, value) in dictionary {
            features[name] = try Self.featureValue(from: value, name: name)
        }
        self.dictionary = features
    }

    /// Creates a provider from feature values (cannot fail). **Tessera extension.**
    ///
    /// ```swift
    /// let provider = MLDictionaryFeatureProvider(features: ["x": MLFeatureValue(double: 1)])
    /// ```
    public init(features: [String: MLFeatureValue]) {
        self.dictionary = features
    }

    /// The names of the features.
    public var featureNames: Set<String> { Set(dictionary.keys) }

    /// The feature named `featureName`, or `nil`.
    ///
    /// ```swift
    /// provider.featureValue(for: "classLabel")?.stringValue
    /// ```
    public func featureValue(for featureName: String) -> MLFeatureValue? { dictionary[featureName] }

    /// The feature named `featureName`, or `nil`.
    ///
    /// ```swift
    /// provider["classLabel"]?.stringValue
    /// ```
    public subscript(featureName: String) -> MLFeatureValue? { dictionary[featureName] }

    /// Converts one dictionary value to a feature value.
    static func featureValue(from value: Any, name: String) throws -> MLFeatureValue {
        switch value {
        case let feature as MLFeatureValue: return feature
        case let string as String: return MLFeatureValue(string: string)
        case let array as MLMultiArray: return MLFeatureValue(multiArray: array)
        case let sequence as MLSequence: return MLFeatureValue(sequence: sequence)
        case let array as MLShapedArray<Float>: return MLFeatureValue(shapedArray: array)
        case let array as MLShapedArray<Double>: return MLFeatureValue(shapedArray: array)
        case let array as MLShapedArray<Float16>: return MLFeatureValue(shapedArray: array)
        case let array as MLShapedArray<Int32>: return MLFeatureValue(shapedArray: array)
        case let array as MLShapedArray<Int8>: return MLFeatureValue(shapedArray: array)
        case let number as NSNumber:
            return number.doubleValue == Double(number.int64Value) && !(value is Double) && !(value is Float)
                ? MLFeatureValue(int64: number.int64Value) : MLFeatureValue(double: number.doubleValue)
        case let integer as any BinaryInteger: return MLFeatureValue(int64: Int64(integer))
        case let double as Double: return MLFeatureValue(double: double)
        case let float as Float: return MLFeatureValue(double: Double(float))
        case let entries as [AnyHashable: NSNumber]: return try MLFeatureValue(dictionary: entries)
        case let entries as [String: Double]:
            return try MLFeatureValue(dictionary: entries.mapValues { NSNumber(value: $0) })
        case let entries as [Int64: Double]:
            return try MLFeatureValue(dictionary: entries.mapValues { NSNumber(value: $0) })
        default:
            throw MLModelError(
                .featureType,
                "feature \"\(name)\": a \(type(of: value)) cannot be a feature value; pass an MLFeatureValue, "
                    + "a number, a String, an MLMultiArray, an MLShapedArray, an MLSequence or a dictionary of numbers")
        }
    }
}
