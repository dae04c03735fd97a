import CLibPNG
import Foundation

// libpng's simplified-API format flags (png.h's PNG_FORMAT_* macros do not import).
private let formatFlagAlpha: UInt32 = 0x01
private let formatFlagColor: UInt32 = 0x02

extension ImageDecoder {
    /// Decodes a PNG with libpng's simplified API: 8 bits a channel, gray or RGBA.
    static func decodePNG(_ data: Data, name: String) throws(ImageError) -> PixelImage {
        // libpng reads from the memory until png_image_finish_read returns: one closure for both.
        let result: Result<PixelImage, ImageError> = data.withUnsafeBytes { bytes in
            var image = png_image()
            image.version = UInt32(PNG_IMAGE_VERSION)
            guard png_image_begin_read_from_memory(&image, bytes.baseAddress, bytes.count) != 0 else {
                defer { png_image_free(&image) }
                return .failure(ImageError(.corrupt, "\(name) is not a readable PNG file: \(message(of: image))"))
            }
            let width = Int(image.width)
            let height = Int(image.height)
            if case .failure(let error) = Result(catching: { () throws(ImageError) in
                try checkSize(width: width, height: height, name: name)
            }) {
                png_image_free(&image)
                return .failure(error)
            }
            let isColor = image.format & formatFlagColor != 0
            image.format = isColor ? formatFlagColor | formatFlagAlpha : 0
            let channels: PixelImage.Channels = isColor ? .rgba : .gray
            var pixels = [UInt8](repeating: 0, count: width * height * channels.rawValue)
            let finished = pixels.withUnsafeMutableBytes { out in
                png_image_finish_read(&image, nil, out.baseAddress, 0, nil)
            }
            guard finished != 0 else {
                defer { png_image_free(&image) }
                return .failure(
                    ImageError(.corrupt, "\(name) is a damaged or truncated PNG file: \(message(of: image))"))
            }
            return .success(PixelImage(width: width, height: height, channels: channels, pixels: pixels))
        }
        return try result.get()
    }

    /// libpng's message for a failed call.
    private static func message(of image: png_image) -> String {
        withUnsafeBytes(of: image.message) { raw in
            String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
        }
    }
}
