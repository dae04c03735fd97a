import Foundation

/// An ordered collection of strings or 64-bit integers: the value of a sequence feature.
///
/// Immutable, so it is `Sendable`.
///
/// ```swift
/// let words = MLSequence(strings: ["a", "cat"])
/// let value = MLFeatureValue(sequence: words)
/// value.sequenceValue?.stringValues            // ["a", "cat"]
/// ```
public final class MLSequence: Sendable {
    /// The element type: `.string`, `.int64`, or the type an empty sequence was made with.
    public let type: MLFeatureType
    /// The elements of a string sequence; empty for other sequences.
    public let stringValues: [String]
    /// The elements of an integer sequence, stored unboxed.
    let int64Storage: [Int64]

    /// Creates a sequence of strings.
    ///
    /// ```swift
    /// MLSequence(strings: ["hello", "world"]).type      // .string
    /// ```
    public convenience init(strings: [String]) {
        self.init(type: .string, strings: strings, int64s: [])
    }

    /// Creates a sequence of 64-bit integers.
    ///
    /// ```swift
    /// MLSequence(int64s: [1, 2, 3]).int64Values        // [1, 2, 3]
    /// ```
    public convenience init(int64s: [NSNumber]) {
        self.init(type: .int64, strings: [], int64s: int64s.map(\.int64Value))
    }

    /// Creates an empty sequence whose elements would be of `type`.
    ///
    /// ```swift
    /// MLSequence(empty: .string).stringValues           // []
    /// ```
    public convenience init(empty type: MLFeatureType) {
        self.init(type: type, strings: [], int64s: [])
    }

    private init(type: MLFeatureType, strings: [String], int64s: [Int64]) {
        self.type = type
        self.stringValues = strings
        self.int64Storage = int64s
    }

    /// The elements of an integer sequence; empty for other sequences.
    public var int64Values: [NSNumber] { int64Storage.map { NSNumber(value: $0) } }
}
