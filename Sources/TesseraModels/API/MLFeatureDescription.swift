import Foundation
import TesseraCoreVideo
import TesseraMultiArray

/// A model input's or output's name, type and constraints.
///
/// ```swift
/// let image = model.modelDescription.inputDescriptionsByName["image"]!
/// image.type                                   // .multiArray
/// image.multiArrayConstraint?.shape            // [1, 64]
/// image.isAllowedValue(MLFeatureValue(multiArray: pixels))   // true when pixels is [1, 64]
/// ```
public final class MLFeatureDescription: Sendable {
    /// The feature's name.
    public let name: String
    /// The kind of value the feature holds.
    public let type: MLFeatureType
    /// Whether an input may be left out.
    public let isOptional: Bool
    /// The multi-array constraint of a `.multiArray` feature.
    public let multiArrayConstraint: MLMultiArrayConstraint?
    /// The image constraint of an `.image` feature.
    public let imageConstraint: MLImageConstraint?
    /// The key constraint of a `.dictionary` feature.
    public let dictionaryConstraint: MLDictionaryConstraint?
    /// The element constraint of a `.sequence` feature.
    public let sequenceConstraint: MLSequenceConstraint?
    /// The buffer constraint of a `.state` feature.
    public let stateConstraint: MLStateConstraint?
    /// The feature's documentation. **Tessera extension** (Core ML shows it in Xcode only).
    public let shortDescription: String

    init(
        name: String, type: MLFeatureType, isOptional: Bool, shortDescription: String = "",
        multiArrayConstraint: MLMultiArrayConstraint? = nil, imageConstraint: MLImageConstraint? = nil,
        dictionaryConstraint: MLDictionaryConstraint? = nil, sequenceConstraint: MLSequenceConstraint? = nil,
        stateConstraint: MLStateConstraint? = nil
    ) {
        self.name = name
        self.type = type
        self.isOptional = isOptional
        self.shortDescription = shortDescription
        self.multiArrayConstraint = multiArrayConstraint
        self.imageConstraint = imageConstraint
        self.dictionaryConstraint = dictionaryConstraint
        self.sequenceConstraint = sequenceConstraint
        self.stateConstraint = stateConstraint
    }

    /// Whether `value` satisfies the description: its type, and for multi-arrays its shape
    /// (the default shape, or one the flexible-shape constraint allows). An undefined value
    /// is allowed only for an optional feature.
    ///
    /// ```swift
    /// description.isAllowedValue(MLFeatureValue(string: "x"))    // false for a multi-array input
    /// ```
    public func isAllowedValue(_ value: MLFeatureValue) -> Bool {
        problem(with: value) == nil
    }

    /// Why `value` does not satisfy the description, as the end of a sentence that starts
    /// with the feature's name; `nil` when it does.
    func problem(with value: MLFeatureValue) -> String? {
        if value.isUndefined {
            return isOptional ? nil : "is undefined, but the feature is not optional"
        }
        // Integers and doubles convert into each other, as Core ML allows.
        let numeric: Set<MLFeatureType> = [.int64, .double]
        guard value.type == type || (numeric.contains(value.type) && numeric.contains(type)) else {
            return "is a \(value.type) value, but the model expects \(expectation)"
        }
        switch value.storage {
        case .multiArray(let array):
            guard let constraint = multiArrayConstraint else { return nil }
            return Self.shapeProblem(array.shapeValues, constraint)
        case .image(let buffer):
            guard let constraint = imageConstraint else { return nil }
            return Self.imageProblem(buffer, constraint)
        case .dictionary(let entries):
            guard let keyType = dictionaryConstraint?.keyType else { return nil }
            for key in entries.keys {
                let ok = keyType == .string ? key.base is String : key.base is Int64
                if !ok { return "has a key \(key) that is not \(keyType == .string ? "a String" : "an Int64")" }
            }
            return nil
        case .sequence(let sequence):
            guard let constraint = sequenceConstraint else { return nil }
            if sequence.type != constraint.valueDescription.type {
                return "is a sequence of \(sequence.type), but the model expects a sequence of "
                    + "\(constraint.valueDescription.type)"
            }
            let length = sequence.stringValues.count + sequence.int64Storage.count
            let range = constraint.countRange
            if length < range.location || (range.length != Int.max - range.location && length > NSMaxRange(range)) {
                return "has \(length) elements, but the model allows \(range.location)...\(NSMaxRange(range))"
            }
            return nil
        default:
            return nil
        }
    }

    /// The shape problem of a multi-array, or `nil` when its shape is allowed.
    ///
    /// A rank-0 value counts as shape `[1]`, the shape Core ML gives every scalar at its
    /// boundary (a NumPy 0-d array from Python, a rank-0 `MLTensor`).
    static func shapeProblem(_ shape: [Int], _ constraint: MLMultiArrayConstraint) -> String? {
        let shape = shape.isEmpty ? [1] : shape
        let flexible = constraint.shapeConstraint
        switch flexible.type {
        case .enumerated:
            let allowed =
                flexible.enumeratedShapeValues.isEmpty ? [constraint.shapeValues] : flexible.enumeratedShapeValues
            if allowed.contains(shape) { return nil }
            return "has shape \(shape), but the model allows only the shapes "
                + allowed.map { "\($0)" }.joined(separator: ", ")
        case .range:
            let ranges = flexible.sizeRanges
            let described = "[" + ranges.map(Self.describe).joined(separator: ", ") + "]"
            guard shape.count == ranges.count else {
                return "has rank \(shape.count) (shape \(shape)), but the model expects rank \(ranges.count) "
                    + "with sizes in \(described)"
            }
            for (axis, (size, range)) in zip(shape, ranges).enumerated() where !range.contains(size) {
                return "has shape \(shape), but dimension \(axis) must be in \(Self.describe(range)) "
                    + "(allowed: \(described))"
            }
            return nil
        case .unspecified:
            let expected = constraint.shapeValues
            if expected.isEmpty || expected == shape { return nil }
            return "has shape \(shape), but the model expects shape \(expected)"
        }
    }

    static func describe(_ range: ClosedRange<Int>) -> String {
        range.upperBound == Int.max ? "\(range.lowerBound)..." : "\(range.lowerBound)...\(range.upperBound)"
    }

    /// "a float32 multi-array of shape [1, 64]", "a string", …
    var expectation: String {
        switch type {
        case .multiArray:
            guard let constraint = multiArrayConstraint else { return "a multi-array" }
            let shape = constraint.shapeValues.isEmpty ? "" : " of shape \(constraint.shapeValues)"
            return "a \(constraint.dataType) multi-array\(shape)"
        case .int64: return "an int64"
        case .image:
            guard let constraint = imageConstraint else { return "an image" }
            return "a \(constraint.pixelsWide)×\(constraint.pixelsHigh) image"
        default: return "a \(type)"
        }
    }
}

extension MLFeatureDescription: CustomStringConvertible {
    /// `image: multiArray (float32 [1, 64])`.
    public var description: String {
        var text = "\(name): \(type)"
        if let constraint = multiArrayConstraint {
            text += " (\(constraint.dataType) \(constraint.shapeValues)"
            switch constraint.shapeConstraint.type {
            case .enumerated:
                text +=
                    ", one of "
                    + constraint.shapeConstraint.enumeratedShapeValues.map { "\($0)" }.joined(separator: " ")
            case .range:
                text +=
                    ", ranges [" + constraint.shapeConstraint.sizeRanges.map(Self.describe).joined(separator: ", ")
                    + "]"
            case .unspecified: break
            }
            text += ")"
        }
        if let image = imageConstraint {
            text += " (\(image.pixelsWide)×\(image.pixelsHigh) \(pixelFormatName(image.pixelFormatType)))"
        }
        if let keyType = dictionaryConstraint?.keyType { text += " (\(keyType) keys)" }
        if isOptional { text += ", optional" }
        return text
    }
}
