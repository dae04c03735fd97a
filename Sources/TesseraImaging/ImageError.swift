/// Why an image could not be decoded, converted or resized.
///
/// `TesseraModels` turns these into `MLModelError`s; the message says what was wrong and with
/// which file or buffer.
package struct ImageError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The kinds of failure.
    package enum Kind: Sendable, Equatable {
        /// The bytes are not a PNG or JPEG file.
        case unknownFormat
        /// The file is corrupt or truncated.
        case corrupt
        /// The image is 0×0, or larger than ``ImageDecoder/maximumPixelCount``.
        case badSize
        /// A pixel buffer's format is not one the conversion takes.
        case unsupportedPixelFormat
        /// A crop rectangle lies outside the image, or is empty.
        case badCropRect
        /// Memory for the pixels could not be allocated.
        case allocationFailed
    }

    /// The kind of failure.
    package let kind: Kind
    /// What went wrong, for a person.
    package let message: String

    /// Creates an error.
    package init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    /// The message.
    package var description: String { message }
}
