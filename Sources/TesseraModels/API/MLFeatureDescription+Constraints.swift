import Foundation
import TesseraCoreVideo
import TesseraImaging
import TesseraTensor

/// What a multi-array feature must look like: its default shape, its data type and the
/// other shapes it allows.
///
/// ```swift
/// let constraint = model.modelDescription.inputDescriptionsByName["image"]!.multiArrayConstraint!
/// constraint.shape               // [1, 64]
/// constraint.dataType            // .float32
/// constraint.shapeConstraint.type // .unspecified: only the default shape
/// ```
public final class MLMultiArrayConstraint: Sendable {
    let shapeValues: [Int]
    /// The element type the model declares.
    public let dataType: MLMultiArrayDataType
    /// The shapes allowed besides (or instead of) ``shape``.
    public let shapeConstraint: MLMultiArrayShapeConstraint

    init(shape: [Int], dataType: MLMultiArrayDataType, shapeConstraint: MLMultiArrayShapeConstraint) {
        self.shapeValues = shape
        self.dataType = dataType
        self.shapeConstraint = shapeConstraint
    }

    /// The default shape; empty when the model leaves it unspecified.
    public var shape: [NSNumber] { shapeValues.map { NSNumber(value: $0) } }
}

/// The kinds of shape flexibility a multi-array feature can have.
public enum MLMultiArrayShapeConstraintType: Int, Sendable, Hashable {
    /// Only the default shape.
    case unspecified = 1
    /// One of a list of shapes (``MLMultiArrayShapeConstraint/enumeratedShapes``).
    case enumerated = 2
    /// Any shape whose dimensions lie in ranges (``MLMultiArrayShapeConstraint/sizeRangeForDimension``).
    case range = 3
}

/// The shapes a flexible multi-array feature allows.
///
/// ```swift
/// let flexible = description.multiArrayConstraint!.shapeConstraint
/// if flexible.type == .range {
///     let tokens = flexible.sizeRangeForDimension[1].rangeValue   // location 1, length 63: 1...64
/// }
/// ```
public final class MLMultiArrayShapeConstraint: Sendable {
    /// The kind of flexibility.
    public let type: MLMultiArrayShapeConstraintType
    let enumeratedShapeValues: [[Int]]
    let sizeRanges: [ClosedRange<Int>]

    init(type: MLMultiArrayShapeConstraintType, enumeratedShapes: [[Int]] = [], sizeRanges: [ClosedRange<Int>] = []) {
        self.type = type
        self.enumeratedShapeValues = enumeratedShapes
        self.sizeRanges = sizeRanges
    }

    /// The allowed shapes of an `.enumerated` constraint; empty otherwise.
    public var enumeratedShapes: [[NSNumber]] { enumeratedShapeValues.map { $0.map { NSNumber(value: $0) } } }

    /// One `NSRange` per dimension for a `.range` constraint (`location` the smallest size,
    /// `location + length` the largest; an unbounded dimension has length
    /// `Int.max - location`); empty otherwise.
    public var sizeRangeForDimension: [NSValue] {
        sizeRanges.map { NSValue(range: NSRange(location: $0.lowerBound, length: $0.upperBound - $0.lowerBound)) }
    }
}

/// What a dictionary feature's keys must be.
///
/// ```swift
/// description.dictionaryConstraint?.keyType     // .string for a classifier's probabilities
/// ```
public final class MLDictionaryConstraint: Sendable {
    /// `.string` or `.int64`.
    public let keyType: MLFeatureType

    init(keyType: MLFeatureType) {
        self.keyType = keyType
    }
}

/// What a sequence feature must hold.
///
/// ```swift
/// description.sequenceConstraint?.valueDescription.type     // .string
/// ```
public final class MLSequenceConstraint: Sendable {
    /// The description every element must satisfy.
    public let valueDescription: MLFeatureDescription
    /// The allowed lengths (`location` the shortest, `location + length` the longest).
    public let countRange: NSRange

    init(valueDescription: MLFeatureDescription, countRange: NSRange) {
        self.valueDescription = valueDescription
        self.countRange = countRange
    }
}

/// The size of an image, in pixels.
public final class MLImageSize: Sendable {
    /// The width.
    public let pixelsWide: Int
    /// The height.
    public let pixelsHigh: Int

    init(pixelsWide: Int, pixelsHigh: Int) {
        self.pixelsWide = pixelsWide
        self.pixelsHigh = pixelsHigh
    }
}

/// The kinds of size flexibility an image feature can have.
public enum MLImageSizeConstraintType: Int, Sendable, Hashable {
    /// Only the default size.
    case unspecified = 0
    /// One of a list of sizes.
    case enumerated = 2
    /// Any width and height in ranges.
    case range = 3
}

/// The sizes a flexible image feature allows.
public final class MLImageSizeConstraint: Sendable {
    /// The kind of flexibility.
    public let type: MLImageSizeConstraintType
    /// The allowed widths of a `.range` constraint.
    public let pixelsWideRange: NSRange
    /// The allowed heights of a `.range` constraint.
    public let pixelsHighRange: NSRange
    /// The allowed sizes of an `.enumerated` constraint.
    public let enumeratedImageSizes: [MLImageSize]

    init(type: MLImageSizeConstraintType, pixelsWideRange: NSRange, pixelsHighRange: NSRange, sizes: [MLImageSize]) {
        self.type = type
        self.pixelsWideRange = pixelsWideRange
        self.pixelsHighRange = pixelsHighRange
        self.enumeratedImageSizes = sizes
    }
}

/// What an image feature must look like: its default size, its pixel format and the other sizes
/// it allows.
///
/// Pass it to ``MLFeatureValue/init(imageAt:constraint:options:)`` to make a value the model
/// takes.
///
/// ```swift
/// let image = description.imageConstraint!
/// (image.pixelsWide, image.pixelsHigh)      // (224, 224)
/// image.pixelFormatType == kCVPixelFormatType_32BGRA
/// ```
public final class MLImageConstraint: Sendable {
    /// The default width.
    public let pixelsWide: Int
    /// The default height.
    public let pixelsHigh: Int
    /// The pixel format: `kCVPixelFormatType_OneComponent8` (`0x4C303038`, grayscale),
    /// `kCVPixelFormatType_32BGRA` (`0x42475241`, RGB and BGR), or
    /// `kCVPixelFormatType_OneComponent16Half` (`0x4C303068`).
    public let pixelFormatType: OSType
    /// Other allowed sizes.
    public let sizeConstraint: MLImageSizeConstraint
    /// The channel order the model reads (RGB or BGR share the BGRA pixel format).
    let colorLayout: ImageColorLayout

    init(
        pixelsWide: Int, pixelsHigh: Int, pixelFormatType: OSType, sizeConstraint: MLImageSizeConstraint,
        colorLayout: ImageColorLayout
    ) {
        self.pixelsWide = pixelsWide
        self.pixelsHigh = pixelsHigh
        self.pixelFormatType = pixelFormatType
        self.sizeConstraint = sizeConstraint
        self.colorLayout = colorLayout
    }
}

/// What a state feature's buffer looks like.
public final class MLStateConstraint: Sendable {
    /// The buffer's shape: the declared one, or `[1]` for a state the program declares
    /// rank 0 (Core ML's shape for a scalar outside the program).
    public let bufferShape: [Int]
    /// The buffer's element type.
    public let dataType: MLMultiArrayDataType

    init(bufferShape: [Int], dataType: MLMultiArrayDataType) {
        self.bufferShape = bufferShape
        self.dataType = dataType
    }
}
