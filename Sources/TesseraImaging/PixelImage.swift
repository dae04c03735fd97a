/// An 8-bit image in memory: gray (one channel) or RGBA (four), rows packed top to bottom.
///
/// What the decoders produce and what resizing and the pixel buffer conversions work on.
/// Alpha is kept but not applied: Core ML reads the color channels of a pixel buffer and
/// ignores its alpha.
package struct PixelImage: Sendable, Equatable {
    /// The channel layouts.
    package enum Channels: Int, Sendable {
        /// One luma byte a pixel.
        case gray = 1
        /// Red, green, blue, alpha bytes.
        case rgba = 4
    }

    /// The width in pixels.
    package var width: Int
    /// The height in pixels.
    package var height: Int
    /// The channel layout.
    package var channels: Channels
    /// `width * height * channels.rawValue` bytes.
    package var pixels: [UInt8]

    /// An image over given bytes.
    ///
    /// - Precondition: `pixels.count == width * height * channels.rawValue`.
    package init(width: Int, height: Int, channels: Channels, pixels: [UInt8]) {
        precondition(
            pixels.count == width * height * channels.rawValue,
            "[PixelImage] \(pixels.count) bytes for \(width)x\(height)x\(channels.rawValue)")
        self.width = width
        self.height = height
        self.channels = channels
        self.pixels = pixels
    }

    /// A black (alpha 255) image.
    package init(width: Int, height: Int, channels: Channels) {
        var pixels = [UInt8](repeating: 0, count: width * height * channels.rawValue)
        if channels == .rgba {
            for index in stride(from: 3, to: pixels.count, by: 4) { pixels[index] = 255 }
        }
        self.init(width: width, height: height, channels: channels, pixels: pixels)
    }

    /// The image in another channel layout: gray to RGBA repeats luma; RGBA to gray takes
    /// BT.601 luma, `0.299 R + 0.587 G + 0.114 B`, rounded.
    package func converted(to target: Channels) -> PixelImage {
        if target == channels { return self }
        let count = width * height
        var out = [UInt8](repeating: 255, count: count * target.rawValue)
        pixels.withUnsafeBufferPointer { source in
            out.withUnsafeMutableBufferPointer { destination in
                if target == .gray {
                    for index in 0..<count {
                        let r = Int(source[4 * index])
                        let g = Int(source[4 * index + 1])
                        let b = Int(source[4 * index + 2])
                        // Fixed point 0.299, 0.587, 0.114 in 1/65536, rounded.
                        destination[index] = UInt8((19595 * r + 38470 * g + 7471 * b + 32768) >> 16)
                    }
                } else {
                    for index in 0..<count {
                        let value = source[index]
                        destination[4 * index] = value
                        destination[4 * index + 1] = value
                        destination[4 * index + 2] = value
                    }
                }
            }
        }
        return PixelImage(width: width, height: height, channels: target, pixels: out)
    }
}
