import Foundation

/// Decodes PNG and JPEG files into ``PixelImage``s, upright.
///
/// The format comes from the file's signature, not its name. The EXIF orientation (a JPEG's
/// APP1 segment, a PNG's `eXIf` chunk) is applied, so the image comes out as a viewer shows it.
/// Color images decode to RGBA, grayscale ones to gray. The declared size is checked before
/// any pixel memory is allocated, so a 100,000 × 100,000 header costs nothing.
///
/// ```swift
/// let image = try ImageDecoder.decode(Data(contentsOf: url), name: url.lastPathComponent)
/// (image.width, image.height)
/// ```
package enum ImageDecoder {
    /// The largest image decoded: 2²⁷ pixels (for example 16384 × 8192), 512 MiB as RGBA.
    package static let maximumPixelCount = 1 << 27

    /// The file formats recognised.
    package enum Format: Sendable {
        /// Portable Network Graphics.
        case png
        /// JPEG (JFIF or EXIF).
        case jpeg
    }

    /// The format a file's first bytes announce, or `nil`.
    package static func format(of data: Data) -> Format? {
        let prefix = [UInt8](data.prefix(8))
        if prefix == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] { return .png }
        if prefix.count >= 3, prefix[0] == 0xFF, prefix[1] == 0xD8, prefix[2] == 0xFF { return .jpeg }
        return nil
    }

    /// Decodes a PNG or JPEG file and applies its EXIF orientation, or the one given.
    ///
    /// - Parameters:
    ///   - data: The file's bytes.
    ///   - name: The file's name, for messages.
    ///   - orientation: The orientation to apply instead of the file's own tag; `nil` (the
    ///     default) reads the tag (`.up` when there is none).
    /// - Throws: ``ImageError`` `.unknownFormat`, `.corrupt` (damaged or truncated), `.badSize`
    ///   (0×0 or over ``maximumPixelCount``), or `.allocationFailed`.
    package static func decode(
        _ data: Data, name: String, orientation: EXIFOrientation? = nil
    ) throws(ImageError) -> PixelImage {
        let image: PixelImage
        let tagged: EXIFOrientation
        switch format(of: data) {
        case .png:
            image = try decodePNG(data, name: name)
            tagged = orientation ?? EXIFOrientation.inPNG(data)
        case .jpeg:
            image = try decodeJPEG(data, name: name)
            tagged = orientation ?? EXIFOrientation.inJPEG(data)
        case nil:
            throw ImageError(.unknownFormat, "\(name) is neither a PNG nor a JPEG file (its first bytes say neither)")
        }
        return tagged.applied(to: image)
    }

    /// Checks a declared size before decoding.
    static func checkSize(width: Int, height: Int, name: String) throws(ImageError) {
        guard width > 0, height > 0 else {
            throw ImageError(.badSize, "\(name) declares an empty image (\(width)×\(height) pixels)")
        }
        guard width <= maximumPixelCount, height <= maximumPixelCount, width * height <= maximumPixelCount else {
            throw ImageError(
                .badSize,
                "\(name) declares \(width)×\(height) pixels, more than the \(maximumPixelCount) Tessera decodes")
        }
    }
}
