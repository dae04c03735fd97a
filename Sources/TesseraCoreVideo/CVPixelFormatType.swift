// swift-format-ignore-file: AlwaysUseLowerCamelCase
// CoreVideo's C names, spelled as Apple spells them.

/// 32 bits a pixel: blue, green, red, alpha (`'BGRA'`), the format Core ML gives color images.
public let kCVPixelFormatType_32BGRA: OSType = 0x4247_5241
/// 32 bits a pixel: alpha, red, green, blue (`0x20`).
public let kCVPixelFormatType_32ARGB: OSType = 0x0000_0020
/// 32 bits a pixel: red, green, blue, alpha (`'RGBA'`).
public let kCVPixelFormatType_32RGBA: OSType = 0x5247_4241
/// 24 bits a pixel: red, green, blue (`0x18`).
public let kCVPixelFormatType_24RGB: OSType = 0x0000_0018
/// 8 bits a pixel, one channel (`'L008'`), the format Core ML gives grayscale images.
public let kCVPixelFormatType_OneComponent8: OSType = 0x4C30_3038
/// A float16 a pixel, one channel (`'L00h'`), for `GRAYSCALE_FLOAT16` images.
public let kCVPixelFormatType_OneComponent16Half: OSType = 0x4C30_3068
/// A float32 a pixel, one channel (`'L00f'`).
public let kCVPixelFormatType_OneComponent32Float: OSType = 0x4C30_3066
/// Bi-planar 4:2:0 Y'CbCr, full range (`'420f'`): plane 0 is luma (one byte a pixel), plane 1
/// interleaved Cb, Cr at half width and half height (rounded up).
public let kCVPixelFormatType_420YpCbCr8BiPlanarFullRange: OSType = 0x3432_3066
/// Bi-planar 4:2:0 Y'CbCr, video range (`'420v'`): luma 16–235, chroma 16–240; planes as in
/// ``kCVPixelFormatType_420YpCbCr8BiPlanarFullRange``.
public let kCVPixelFormatType_420YpCbCr8BiPlanarVideoRange: OSType = 0x3432_3076

/// What the stand-in knows of a pixel format: its planes and their pixel sizes.
package struct PixelFormatLayout: Sendable, Equatable {
    /// One plane: bytes a pixel and how its size divides the buffer's.
    package struct Plane: Sendable, Equatable {
        /// Bytes a pixel in this plane (2 for the interleaved CbCr plane).
        package var bytesPerPixel: Int
        /// The plane's width and height are the buffer's divided by this, rounded up.
        package var subsampling: Int
    }

    /// The planes; one for the packed formats.
    package var planes: [Plane]

    /// Whether the format has planes (`CVPixelBufferIsPlanar`).
    package var isPlanar: Bool { planes.count > 1 }

    /// The layout of a format, or `nil` when the stand-in does not support it.
    package static func of(_ format: OSType) -> PixelFormatLayout? {
        switch format {
        case kCVPixelFormatType_32BGRA, kCVPixelFormatType_32ARGB, kCVPixelFormatType_32RGBA,
            kCVPixelFormatType_OneComponent32Float:
            PixelFormatLayout(planes: [Plane(bytesPerPixel: 4, subsampling: 1)])
        case kCVPixelFormatType_24RGB: PixelFormatLayout(planes: [Plane(bytesPerPixel: 3, subsampling: 1)])
        case kCVPixelFormatType_OneComponent8: PixelFormatLayout(planes: [Plane(bytesPerPixel: 1, subsampling: 1)])
        case kCVPixelFormatType_OneComponent16Half:
            PixelFormatLayout(planes: [Plane(bytesPerPixel: 2, subsampling: 1)])
        case kCVPixelFormatType_420YpCbCr8BiPlanarFullRange, kCVPixelFormatType_420YpCbCr8BiPlanarVideoRange:
            PixelFormatLayout(planes: [
                Plane(bytesPerPixel: 1, subsampling: 1), Plane(bytesPerPixel: 2, subsampling: 2),
            ])
        default: nil
        }
    }
}

/// A pixel format's four-character code or number, as messages print it (`'BGRA'`, `0x20`).
package func pixelFormatName(_ format: OSType) -> String {
    let bytes = [24, 16, 8, 0].map { UInt8((format >> UInt32($0)) & 0xFF) }
    if bytes.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) {
        return "'" + String(decoding: bytes, as: UTF8.self) + "'"
    }
    return "0x" + String(format, radix: 16)
}
