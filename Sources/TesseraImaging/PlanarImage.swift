import TesseraCoreVideo

/// The channel layouts of a model's image feature (Core ML's `ImageFeatureType.ColorSpace`).
package enum ImageColorLayout: Sendable, Equatable {
    /// Three 8-bit channels, red first; a `kCVPixelFormatType_32BGRA` buffer.
    case rgb
    /// Three 8-bit channels, blue first; a `kCVPixelFormatType_32BGRA` buffer.
    case bgr
    /// One 8-bit channel; a `kCVPixelFormatType_OneComponent8` buffer.
    case grayscale
    /// One float16 channel; a `kCVPixelFormatType_OneComponent16Half` buffer.
    case grayscaleFloat16

    /// The number of channels.
    package var channelCount: Int { self == .rgb || self == .bgr ? 3 : 1 }

    /// The pixel format Core ML makes and expects for the layout.
    package var pixelFormat: OSType {
        switch self {
        case .rgb, .bgr: kCVPixelFormatType_32BGRA
        case .grayscale: kCVPixelFormatType_OneComponent8
        case .grayscaleFloat16: kCVPixelFormatType_OneComponent16Half
        }
    }
}

/// Conversions between pixel buffers and planar channel values (`[C, H, W]`, row-major), the
/// form a model's image feature takes.
package enum PlanarImage {
    /// A buffer's pixels as `channelCount × height × width` floats in the layout's channel
    /// order, each `value * scale + bias[channel]` (pixel values are 0…255; a one-component half
    /// or float buffer gives its values as they are).
    ///
    /// This is Core ML's image preprocessing: ML programs converted by coremltools do their
    /// scale and bias inside the program (pass 1 and zeros); NeuralNetwork models declare them in
    /// their `preprocessing` scaler.
    ///
    /// - Parameters:
    ///   - bias: One value a channel, or empty for none.
    /// - Throws: ``ImageError`` `.unsupportedPixelFormat` for a format Tessera does not read.
    /// - Precondition: `bias` is empty or has `layout.channelCount` values.
    package static func values(
        of buffer: CVPixelBuffer, layout: ImageColorLayout, scale: Float = 1, bias: [Float] = []
    ) throws(ImageError) -> [Float] {
        precondition(
            bias.isEmpty || bias.count == layout.channelCount,
            "[PlanarImage] \(bias.count) biases for \(layout.channelCount) channels")
        let width = buffer.width
        let height = buffer.height
        let plane = width * height
        let bias = bias.isEmpty ? [Float](repeating: 0, count: layout.channelCount) : bias
        var out = [Float](repeating: 0, count: plane * layout.channelCount)
        let format = buffer.pixelFormatType
        if layout.channelCount == 1,
            format == kCVPixelFormatType_OneComponent16Half || format == kCVPixelFormatType_OneComponent32Float
        {
            let rows = buffer.planes[0]
            for y in 0..<height {
                let row = rows.baseAddress + y * rows.bytesPerRow
                for x in 0..<width {
                    let value =
                        format == kCVPixelFormatType_OneComponent16Half
                        ? Float(row.loadUnaligned(fromByteOffset: 2 * x, as: Float16.self))
                        : row.loadUnaligned(fromByteOffset: 4 * x, as: Float.self)
                    out[y * width + x] = value * scale + bias[0]
                }
            }
            return out
        }
        let image = try PixelImage(pixelBuffer: buffer).converted(to: layout.channelCount == 1 ? .gray : .rgba)
        image.pixels.withUnsafeBufferPointer { source in
            out.withUnsafeMutableBufferPointer { destination in
                if layout.channelCount == 1 {
                    for index in 0..<plane { destination[index] = Float(source[index]) * scale + bias[0] }
                    return
                }
                // Which RGBA byte feeds channel 0, 1, 2.
                let order = layout == .rgb ? [0, 1, 2] : [2, 1, 0]
                for channel in 0..<3 {
                    let from = order[channel]
                    let base = channel * plane
                    let b = bias[channel]
                    for index in 0..<plane { destination[base + index] = Float(source[4 * index + from]) * scale + b }
                }
            }
        }
        return out
    }

    /// A pixel buffer of the layout's format from `channelCount × height × width` planar values:
    /// 8-bit formats clamp to 0…255 and round to nearest (half away from zero); the float16
    /// format keeps the values. Color buffers get alpha 255.
    ///
    /// - Throws: ``ImageError`` `.allocationFailed` or `.badSize` when the buffer cannot be made.
    /// - Precondition: `values.count == layout.channelCount * width * height`.
    package static func pixelBuffer(
        from values: UnsafeBufferPointer<Float>, width: Int, height: Int, layout: ImageColorLayout
    ) throws(ImageError) -> CVPixelBuffer {
        precondition(
            values.count == layout.channelCount * width * height,
            "[PlanarImage] \(values.count) values for \(layout.channelCount)x\(height)x\(width)")
        let buffer: CVPixelBuffer
        switch CVBuffer.allocate(width: width, height: height, pixelFormatType: layout.pixelFormat) {
        case .success(let made): buffer = made
        case .failure(let error):
            throw ImageError(
                error.code == kCVReturnInvalidSize ? .badSize : .allocationFailed,
                "cannot make a \(width)×\(height) image buffer (CVReturn \(error.code))")
        }
        let rows = buffer.planes[0]
        let plane = width * height
        for y in 0..<height {
            let row = rows.baseAddress + y * rows.bytesPerRow
            for x in 0..<width {
                let index = y * width + x
                switch layout {
                case .grayscaleFloat16:
                    row.storeBytes(of: Float16(values[index]), toByteOffset: 2 * x, as: Float16.self)
                case .grayscale:
                    row.storeBytes(of: clampToByte(values[index]), toByteOffset: x, as: UInt8.self)
                case .rgb, .bgr:
                    let first = clampToByte(values[index])
                    let second = clampToByte(values[plane + index])
                    let third = clampToByte(values[2 * plane + index])
                    let (r, b) = layout == .rgb ? (first, third) : (third, first)
                    // BGRA bytes.
                    row.storeBytes(of: b, toByteOffset: 4 * x, as: UInt8.self)
                    row.storeBytes(of: second, toByteOffset: 4 * x + 1, as: UInt8.self)
                    row.storeBytes(of: r, toByteOffset: 4 * x + 2, as: UInt8.self)
                    row.storeBytes(of: 255, toByteOffset: 4 * x + 3, as: UInt8.self)
                }
            }
        }
        return buffer
    }
}
