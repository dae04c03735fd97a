/// The kinds of value a model's inputs and outputs can hold.
///
/// Raw values are Core ML's, so a value stored or sent as a number means the same on both
/// platforms.
///
/// ```swift
/// let value = MLFeatureValue(double: 0.5)
/// value.type == .double                    // true
/// MLFeatureType(rawValue: 5)               // .multiArray
/// ```
public enum MLFeatureType: Int, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// No valid type (an undefined value of unknown kind).
    case invalid = 0
    /// A 64-bit integer.
    case int64 = 1
    /// A double-precision number.
    case double = 2
    /// A string.
    case string = 3
    /// An image (a `CVPixelBuffer` on Apple platforms; Tessera has no image values yet).
    case image = 4
    /// A multi-dimensional array (`MLMultiArray`).
    case multiArray = 5
    /// A dictionary from `String` or `Int64` keys to numbers.
    case dictionary = 6
    /// A sequence of strings or integers (`MLSequence`).
    case sequence = 7
    /// A model state buffer.
    case state = 8

    /// The case's name (`multiArray`, `string`, …), as error messages print it.
    public var description: String {
        switch self {
        case .invalid: "invalid"
        case .int64: "int64"
        case .double: "double"
        case .string: "string"
        case .image: "image"
        case .multiArray: "multiArray"
        case .dictionary: "dictionary"
        case .sequence: "sequence"
        case .state: "state"
        }
    }
}
