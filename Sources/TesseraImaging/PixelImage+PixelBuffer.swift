import TesseraCoreVideo

extension PixelImage {
    /// The pixels of a buffer: gray for the one-component formats and the luma of nothing else,
    /// RGBA for the color ones (the 4:2:0 Y'CbCr formats through BT.601, full or video range).
    ///
    /// One-component half and float buffers are clamped to 0…255 and rounded.
    ///
    /// - Throws: ``ImageError`` `.unsupportedPixelFormat` for a format the stand-in does not know.
    package init(pixelBuffer buffer: CVPixelBuffer) throws(ImageError) {
        let width = buffer.width
        let height = buffer.height
        let format = buffer.pixelFormatType
        let plane = buffer.planes[0]
        // Where red, green, blue sit in a packed color pixel, and the pixel's size.
        let packed: (r: Int, g: Int, b: Int, size: Int)? =
            switch format {
            case kCVPixelFormatType_32BGRA: (2, 1, 0, 4)
            case kCVPixelFormatType_32ARGB: (1, 2, 3, 4)
            case kCVPixelFormatType_32RGBA: (0, 1, 2, 4)
            case kCVPixelFormatType_24RGB: (0, 1, 2, 3)
            default: nil
            }
        if let packed {
            var out = [UInt8](repeating: 255, count: width * height * 4)
            out.withUnsafeMutableBufferPointer { destination in
                for y in 0..<height {
                    let row = (plane.baseAddress + y * plane.bytesPerRow).assumingMemoryBound(to: UInt8.self)
                    for x in 0..<width {
                        let pixel = row + x * packed.size
                        let to = (y * width + x) * 4
                        destination[to] = pixel[packed.r]
                        destination[to + 1] = pixel[packed.g]
                        destination[to + 2] = pixel[packed.b]
                    }
                }
            }
            self.init(width: width, height: height, channels: .rgba, pixels: out)
            return
        }
        switch format {
        case kCVPixelFormatType_OneComponent8, kCVPixelFormatType_OneComponent16Half,
            kCVPixelFormatType_OneComponent32Float:
            var out = [UInt8](repeating: 0, count: width * height)
            out.withUnsafeMutableBufferPointer { destination in
                for y in 0..<height {
                    let row = plane.baseAddress + y * plane.bytesPerRow
                    for x in 0..<width {
                        let value: Float =
                            switch format {
                            case kCVPixelFormatType_OneComponent8:
                                Float(row.load(fromByteOffset: x, as: UInt8.self))
                            case kCVPixelFormatType_OneComponent16Half:
                                Float(row.loadUnaligned(fromByteOffset: 2 * x, as: Float16.self))
                            default: row.loadUnaligned(fromByteOffset: 4 * x, as: Float.self)
                            }
                        destination[y * width + x] = UInt8(min(max(value.rounded(), 0), 255))
                    }
                }
            }
            self.init(width: width, height: height, channels: .gray, pixels: out)
        case kCVPixelFormatType_420YpCbCr8BiPlanarFullRange, kCVPixelFormatType_420YpCbCr8BiPlanarVideoRange:
            self = Self.fromYCbCr(buffer, videoRange: format == kCVPixelFormatType_420YpCbCr8BiPlanarVideoRange)
        default:
            throw ImageError(
                .unsupportedPixelFormat, "pixel format \(pixelFormatName(format)) is not one Tessera converts")
        }
    }

    /// BT.601 Y'CbCr 4:2:0 to RGBA.
    private static func fromYCbCr(_ buffer: CVPixelBuffer, videoRange: Bool) -> PixelImage {
        let width = buffer.width
        let height = buffer.height
        let luma = buffer.planes[0]
        let chroma = buffer.planes[1]
        var out = [UInt8](repeating: 255, count: width * height * 4)
        let yScale: Float = videoRange ? 255 / 219 : 1
        let cScale: Float = videoRange ? 255 / 224 : 1
        let yOffset: Float = videoRange ? 16 : 0
        out.withUnsafeMutableBufferPointer { destination in
            for y in 0..<height {
                let lumaRow = (luma.baseAddress + y * luma.bytesPerRow).assumingMemoryBound(to: UInt8.self)
                let chromaRow = (chroma.baseAddress + (y / 2) * chroma.bytesPerRow).assumingMemoryBound(to: UInt8.self)
                for x in 0..<width {
                    let l = (Float(lumaRow[x]) - yOffset) * yScale
                    let cb = (Float(chromaRow[2 * (x / 2)]) - 128) * cScale
                    let cr = (Float(chromaRow[2 * (x / 2) + 1]) - 128) * cScale
                    let to = (y * width + x) * 4
                    destination[to] = clampToByte(l + 1.402 * cr)
                    destination[to + 1] = clampToByte(l - 0.344_136 * cb - 0.714_136 * cr)
                    destination[to + 2] = clampToByte(l + 1.772 * cb)
                }
            }
        }
        return PixelImage(width: width, height: height, channels: .rgba, pixels: out)
    }

    /// A new pixel buffer of a format holding the image (converted to gray or color as the
    /// format needs).
    ///
    /// - Throws: ``ImageError`` `.unsupportedPixelFormat` for a format other than the packed
    ///   8-bit ones, the one-component ones and the 4:2:0 ones, `.allocationFailed` when the
    ///   buffer cannot be made.
    package func pixelBuffer(format: OSType) throws(ImageError) -> CVPixelBuffer {
        let buffer: CVPixelBuffer
        switch CVBuffer.allocate(width: width, height: height, pixelFormatType: format) {
        case .success(let made): buffer = made
        case .failure(let error) where error.code == kCVReturnInvalidPixelFormat:
            throw ImageError(
                .unsupportedPixelFormat, "pixel format \(pixelFormatName(format)) is not one Tessera makes")
        case .failure(let error):
            throw ImageError(
                .allocationFailed, "cannot make a \(width)×\(height) pixel buffer (CVReturn \(error.code))")
        }
        write(into: buffer)
        return buffer
    }

    /// Writes the pixels into a buffer of the same size.
    ///
    /// - Precondition: The buffer has the image's width and height.
    package func write(into buffer: CVPixelBuffer) {
        precondition(
            buffer.width == width && buffer.height == height,
            "[PixelImage] writing \(width)x\(height) into a \(buffer.width)x\(buffer.height) buffer")
        let format = buffer.pixelFormatType
        let plane = buffer.planes[0]
        let packed: (r: Int, g: Int, b: Int, a: Int?, size: Int)? =
            switch format {
            case kCVPixelFormatType_32BGRA: (2, 1, 0, 3, 4)
            case kCVPixelFormatType_32ARGB: (1, 2, 3, 0, 4)
            case kCVPixelFormatType_32RGBA: (0, 1, 2, 3, 4)
            case kCVPixelFormatType_24RGB: (0, 1, 2, nil, 3)
            default: nil
            }
        if let packed {
            let color = converted(to: .rgba)
            color.pixels.withUnsafeBufferPointer { source in
                for y in 0..<height {
                    let row = (plane.baseAddress + y * plane.bytesPerRow).assumingMemoryBound(to: UInt8.self)
                    for x in 0..<width {
                        let pixel = row + x * packed.size
                        let from = (y * width + x) * 4
                        pixel[packed.r] = source[from]
                        pixel[packed.g] = source[from + 1]
                        pixel[packed.b] = source[from + 2]
                        if let a = packed.a { pixel[a] = source[from + 3] }
                    }
                }
            }
            return
        }
        switch format {
        case kCVPixelFormatType_OneComponent8, kCVPixelFormatType_OneComponent16Half,
            kCVPixelFormatType_OneComponent32Float:
            let gray = converted(to: .gray)
            gray.pixels.withUnsafeBufferPointer { source in
                for y in 0..<height {
                    let row = plane.baseAddress + y * plane.bytesPerRow
                    for x in 0..<width {
                        let value = source[y * width + x]
                        switch format {
                        case kCVPixelFormatType_OneComponent8:
                            row.storeBytes(of: value, toByteOffset: x, as: UInt8.self)
                        case kCVPixelFormatType_OneComponent16Half:
                            row.storeBytes(of: Float16(Float(value)), toByteOffset: 2 * x, as: Float16.self)
                        default: row.storeBytes(of: Float(value), toByteOffset: 4 * x, as: Float.self)
                        }
                    }
                }
            }
        default:
            writeYCbCr(into: buffer, videoRange: format == kCVPixelFormatType_420YpCbCr8BiPlanarVideoRange)
        }
    }

    /// RGBA to BT.601 Y'CbCr 4:2:0 (chroma averaged over each 2 × 2 block).
    private func writeYCbCr(into buffer: CVPixelBuffer, videoRange: Bool) {
        let color = converted(to: .rgba)
        let luma = buffer.planes[0]
        let chroma = buffer.planes[1]
        let yScale: Float = videoRange ? 219 / 255 : 1
        let cScale: Float = videoRange ? 224 / 255 : 1
        let yOffset: Float = videoRange ? 16 : 0
        color.pixels.withUnsafeBufferPointer { source in
            func rgb(_ x: Int, _ y: Int) -> (Float, Float, Float) {
                let at = (y * width + x) * 4
                return (Float(source[at]), Float(source[at + 1]), Float(source[at + 2]))
            }
            for y in 0..<height {
                let row = (luma.baseAddress + y * luma.bytesPerRow).assumingMemoryBound(to: UInt8.self)
                for x in 0..<width {
                    let (r, g, b) = rgb(x, y)
                    row[x] = clampToByte((0.299 * r + 0.587 * g + 0.114 * b) * yScale + yOffset)
                }
            }
            for cy in 0..<chroma.height {
                let row = (chroma.baseAddress + cy * chroma.bytesPerRow).assumingMemoryBound(to: UInt8.self)
                for cx in 0..<chroma.width {
                    var cb: Float = 0
                    var cr: Float = 0
                    var count: Float = 0
                    for y in (2 * cy)..<min(2 * cy + 2, height) {
                        for x in (2 * cx)..<min(2 * cx + 2, width) {
                            let (r, g, b) = rgb(x, y)
                            cb += -0.168_736 * r - 0.331_264 * g + 0.5 * b
                            cr += 0.5 * r - 0.418_688 * g - 0.081_312 * b
                            count += 1
                        }
                    }
                    row[2 * cx] = clampToByte(cb / count * cScale + 128)
                    row[2 * cx + 1] = clampToByte(cr / count * cScale + 128)
                }
            }
        }
    }
}

/// A value rounded and clamped to a byte.
@inline(__always)
func clampToByte(_ value: Float) -> UInt8 {
    UInt8(min(max(value.rounded(), 0), 255))
}
