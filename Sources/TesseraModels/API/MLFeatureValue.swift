import Foundation
import TesseraCoreVideo
import TesseraMultiArray
import TesseraTensor

/// One value of a model input or output: a number, a string, a multi-array, an image (a
/// `CVPixelBuffer`), a dictionary of numbers or a sequence, or an undefined value of a given type.
///
/// The accessors for scalar kinds are non-optional, as in Core ML: `int64Value`,
/// `doubleValue` and `stringValue` return `0`, `0` and `""` for a value of another kind,
/// `dictionaryValue` returns `[:]`. Check ``type`` when the kind is not known.
///
/// ```swift
/// let input = try MLMultiArray(shape: [1, 64], dataType: .float32)
/// let feature = MLFeatureValue(multiArray: input)
/// feature.type                                   // .multiArray
/// let label = output.featureValue(for: "classLabel")?.stringValue
/// let probabilities = output.featureValue(for: "classLabelProbs")?.dictionaryValue
/// ```
///
/// Like Core ML's, a feature value is not `Sendable` (it may hold an `MLMultiArray`); send
/// an `MLShapedArray` between tasks instead.
public final class MLFeatureValue {
    /// The stored value.
    enum Storage {
        case int64(Int64)
        case double(Double)
        case string(String)
        case multiArray(MLMultiArray)
        case image(CVPixelBuffer)
        case dictionary([AnyHashable: NSNumber])
        case sequence(MLSequence)
        case undefined(MLFeatureType)
    }

    let storage: Storage

    init(storage: Storage) {
        self.storage = storage
    }

    /// Creates an integer value.
    ///
    /// ```swift
    /// MLFeatureValue(int64: 3).int64Value     // 3
    /// ```
    public convenience init(int64 value: Int64) { self.init(storage: .int64(value)) }

    /// Creates a double value.
    ///
    /// ```swift
    /// MLFeatureValue(double: 0.25).doubleValue     // 0.25
    /// ```
    public convenience init(double value: Double) { self.init(storage: .double(value)) }

    /// Creates a string value.
    ///
    /// ```swift
    /// MLFeatureValue(string: "cat").stringValue     // "cat"
    /// ```
    public convenience init(string value: String) { self.init(storage: .string(value)) }

    /// Creates a multi-array value; the value refers to `value` (no copy).
    ///
    /// ```swift
    /// let value = MLFeatureValue(multiArray: try MLMultiArray([1, 2, 3] as [Float]))
    /// ```
    public convenience init(multiArray value: MLMultiArray) { self.init(storage: .multiArray(value)) }

    /// Creates a multi-array value from a shaped array, sharing its memory.
    ///
    /// ```swift
    /// let value = MLFeatureValue(shapedArray: MLShapedArray<Float>(scalars: [1, 2], shape: [1, 2]))
    /// value.type                                  // .multiArray
    /// ```
    public convenience init<Scalar: MLShapedArrayScalar>(shapedArray: MLShapedArray<Scalar>) {
        self.init(storage: .multiArray(MLMultiArray(shapedArray)))
    }

    /// Creates a sequence value.
    ///
    /// ```swift
    /// MLFeatureValue(sequence: MLSequence(strings: ["a"])).type     // .sequence
    /// ```
    public convenience init(sequence: MLSequence) { self.init(storage: .sequence(sequence)) }

    /// Creates a dictionary value from `String` or `Int64` keys (other integer keys become
    /// `Int64`) to numbers.
    ///
    /// ```swift
    /// let scores = try MLFeatureValue(dictionary: ["cat": 0.9, "dog": 0.1])
    /// ```
    ///
    /// - Throws: ``MLModelError`` with code `.featureType` when a key is neither a string nor
    ///   an integer, or when string and integer keys are mixed.
    public convenience init(dictionary value: [AnyHashable: NSNumber]) throws {
        var normalized: [AnyHashable: NSNumber] = [:]
        var keyKinds = Set<MLFeatureType>()
        for (key, number) in value {
            switch key.base {
            case let string as String:
                normalized[AnyHashable(string)] = number
                keyKinds.insert(.string)
            case let integer as any BinaryInteger:
                normalized[AnyHashable(Int64(integer))] = number
                keyKinds.insert(.int64)
            case let number as NSNumber where isIntegral(number):
                normalized[AnyHashable(number.int64Value)] = number
                keyKinds.insert(.int64)
            default:
                throw MLModelError(
                    .featureType,
                    "dictionary key \(key) is a \(Swift.type(of: key.base)); dictionary features need String or Int64 keys"
                )
            }
        }
        guard keyKinds.count <= 1 else {
            throw MLModelError(.featureType, "dictionary mixes String and Int64 keys; use one key type")
        }
        self.init(storage: .dictionary(normalized))
    }

    /// Creates an undefined value of a type: a missing optional input.
    ///
    /// ```swift
    /// MLFeatureValue(undefined: .double).isUndefined     // true
    /// ```
    public convenience init(undefined type: MLFeatureType) { self.init(storage: .undefined(type)) }

    /// The kind of value.
    ///
    /// ```swift
    /// MLFeatureValue(string: "x").type     // .string
    /// ```
    public var type: MLFeatureType {
        switch storage {
        case .int64: .int64
        case .double: .double
        case .string: .string
        case .multiArray: .multiArray
        case .image: .image
        case .dictionary: .dictionary
        case .sequence: .sequence
        case .undefined(let type): type
        }
    }

    /// Whether the value is undefined (made with ``init(undefined:)``).
    ///
    /// ```swift
    /// MLFeatureValue(int64: 1).isUndefined     // false
    /// ```
    public var isUndefined: Bool {
        if case .undefined = storage { return true }
        return false
    }

    /// The integer, or 0 when the value is not an `int64`.
    ///
    /// ```swift
    /// output.featureValue(for: "classLabel")?.int64Value      // an Int64-labelled classifier
    /// ```
    public var int64Value: Int64 {
        if case .int64(let value) = storage { return value }
        return 0
    }

    /// The number, or 0 when the value is not a `double`.
    ///
    /// ```swift
    /// MLFeatureValue(double: 2).doubleValue     // 2.0
    /// ```
    public var doubleValue: Double {
        if case .double(let value) = storage { return value }
        return 0
    }

    /// The string, or `""` when the value is not a `string`.
    ///
    /// ```swift
    /// output.featureValue(for: "classLabel")?.stringValue      // "7"
    /// ```
    public var stringValue: String {
        if case .string(let value) = storage { return value }
        return ""
    }

    /// The multi-array, or `nil` when the value is not a `multiArray`.
    ///
    /// ```swift
    /// let logits = output.featureValue(for: "logits")?.multiArrayValue
    /// ```
    public var multiArrayValue: MLMultiArray? {
        if case .multiArray(let value) = storage { return value }
        return nil
    }

    /// The dictionary, or `[:]` when the value is not a `dictionary`. Keys are `String` or
    /// `Int64`.
    ///
    /// ```swift
    /// let p = output.featureValue(for: "classLabelProbs")?.dictionaryValue["7"]?.doubleValue
    /// ```
    public var dictionaryValue: [AnyHashable: NSNumber] {
        if case .dictionary(let value) = storage { return value }
        return [:]
    }

    /// The sequence, or `nil` when the value is not a `sequence`.
    ///
    /// ```swift
    /// MLFeatureValue(sequence: MLSequence(strings: ["a"])).sequenceValue?.stringValues   // ["a"]
    /// ```
    public var sequenceValue: MLSequence? {
        if case .sequence(let value) = storage { return value }
        return nil
    }

    /// The multi-array as a shaped array of `Scalar`, or `nil` when the value is not a
    /// multi-array.
    ///
    /// When `Scalar` is the array's element type the shaped array shares its memory; another
    /// scalar type is converted element by element (as `MLShapedArray(converting:)` does).
    ///
    /// ```swift
    /// let probabilities = output.featureValue(for: "probs")?.shapedArrayValue(of: Float.self)
    /// ```
    public func shapedArrayValue<Scalar: MLShapedArrayScalar>(of type: Scalar.Type) -> MLShapedArray<Scalar>? {
        guard let array = multiArrayValue else { return nil }
        if array.dataType == Scalar.multiArrayDataType { return MLShapedArray<Scalar>(array) }
        return MLShapedArray<Scalar>(converting: array)
    }

    /// Whether two values are of the same type and hold equal contents (multi-arrays:
    /// the same shape and data type and equal elements).
    ///
    /// ```swift
    /// MLFeatureValue(int64: 1).isEqual(to: MLFeatureValue(int64: 1))     // true
    /// ```
    public func isEqual(to value: MLFeatureValue) -> Bool {
        switch (storage, value.storage) {
        case (.int64(let a), .int64(let b)): return a == b
        case (.double(let a), .double(let b)): return a == b
        case (.string(let a), .string(let b)): return a == b
        case (.dictionary(let a), .dictionary(let b)): return a == b
        case (.sequence(let a), .sequence(let b)):
            return a.type == b.type && a.stringValues == b.stringValues && a.int64Storage == b.int64Storage
        case (.undefined(let a), .undefined(let b)): return a == b
        case (.multiArray(let a), .multiArray(let b)):
            guard a.dataType == b.dataType, a.shape == b.shape else { return false }
            return MLShapedArray<Double>(converting: a).scalars == MLShapedArray<Double>(converting: b).scalars
        case (.image(let a), .image(let b)): return Self.samePixels(a, b)
        default: return false
        }
    }
}

extension MLFeatureValue: CustomStringConvertible {
    /// A short description: `Double : 0.5`, `MultiArray : Float32 [1, 64]`, …
    public var description: String {
        switch storage {
        case .int64(let value): "Int64 : \(value)"
        case .double(let value): "Double : \(value)"
        case .string(let value): "String : \(value)"
        case .multiArray(let array): "MultiArray : \(array.dataType) \(array.shape.map(\.intValue))"
        case .image(let buffer): "Image : \(buffer.width) x \(buffer.height) \(pixelFormatName(buffer.pixelFormatType))"
        case .dictionary(let value): "Dictionary : \(value.count) entries"
        case .sequence(let sequence):
            "Sequence : \(sequence.type), \(sequence.stringValues.count + sequence.int64Storage.count) elements"
        case .undefined(let type): "Undefined : \(type)"
        }
    }
}

/// Whether an `NSNumber` key holds an integer (not a fraction), so it can be an `Int64` key.
@inline(__always)
private func isIntegral(_ number: NSNumber) -> Bool {
    number.doubleValue == Double(number.int64Value)
}
