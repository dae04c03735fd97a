import CTesseraJPEG
import Foundation

extension ImageDecoder {
    /// Decodes a JPEG with libjpeg-turbo (accurate integer IDCT): gray stays gray, anything else
    /// becomes RGBA.
    static func decodeJPEG(_ data: Data, name: String) throws(ImageError) -> PixelImage {
        var message = [CChar](repeating: 0, count: 200)
        var width: Int32 = 0
        var height: Int32 = 0
        var grayscale: Int32 = 0
        let headerStatus = data.withUnsafeBytes { bytes in
            tessera_jpeg_read_size(
                bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count, &width, &height, &grayscale,
                &message)
        }
        guard headerStatus == TESSERA_JPEG_OK else {
            throw ImageError(.corrupt, "\(name) is not a readable JPEG file: \(text(message))")
        }
        try checkSize(width: Int(width), height: Int(height), name: name)
        let count = Int(width) * Int(height)
        let channels = grayscale != 0 ? 1 : 3
        var decoded = [UInt8](repeating: 0, count: count * channels)
        let status = data.withUnsafeBytes { bytes in
            decoded.withUnsafeMutableBufferPointer { out in
                tessera_jpeg_decode(
                    bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count, grayscale, out.baseAddress,
                    out.count, maximumPixelCount, &message)
            }
        }
        switch status {
        case TESSERA_JPEG_OK: break
        case TESSERA_JPEG_BAD_SIZE:
            throw ImageError(.badSize, "\(name) declares \(text(message)) pixels, which Tessera does not decode")
        case TESSERA_JPEG_NO_MEMORY:
            throw ImageError(.allocationFailed, "\(name): no memory for \(width)×\(height) pixels")
        default:
            throw ImageError(.corrupt, "\(name) is a damaged or truncated JPEG file: \(text(message))")
        }
        if channels == 1 {
            return PixelImage(width: Int(width), height: Int(height), channels: .gray, pixels: decoded)
        }
        var rgba = [UInt8](repeating: 255, count: count * 4)
        decoded.withUnsafeBufferPointer { source in
            rgba.withUnsafeMutableBufferPointer { destination in
                for index in 0..<count {
                    destination[4 * index] = source[3 * index]
                    destination[4 * index + 1] = source[3 * index + 1]
                    destination[4 * index + 2] = source[3 * index + 2]
                }
            }
        }
        return PixelImage(width: Int(width), height: Int(height), channels: .rgba, pixels: rgba)
    }

    /// A C message buffer as a string.
    private static func text(_ message: [CChar]) -> String {
        String(decoding: message.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
