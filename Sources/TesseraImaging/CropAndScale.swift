/// How an image of one size becomes an image of another: Vision's `VNImageCropAndScaleOption`
/// rules, with its raw values.
///
/// - ``centerCrop``: scale, keeping the aspect ratio, until the **shorter** side fits; cut the
///   longer side's excess evenly from both ends.
/// - ``scaleFit``: scale, keeping the aspect ratio, until the **longer** side fits; the shorter
///   side is centred, and the pixels outside the image are 0 (black, transparent).
/// - ``scaleFill``: scale each axis on its own to the target size.
/// - ``scaleFitRotate90CCW`` and ``scaleFillRotate90CCW``: rotate the image 90°
///   counter-clockwise, then fit or fill.
package enum CropAndScale: UInt, Sendable, CaseIterable {
    case centerCrop = 0
    case scaleFit = 1
    case scaleFill = 2
    case scaleFitRotate90CCW = 0x101
    case scaleFillRotate90CCW = 0x102
}

/// A rectangle in an image's pixels, origin top left, x to the right and y down.
package struct PixelRect: Sendable, Equatable {
    /// The left edge.
    package var x: Double
    /// The top edge.
    package var y: Double
    /// The width.
    package var width: Double
    /// The height.
    package var height: Double

    /// Creates a rectangle.
    package init(x: Double, y: Double, width: Double, height: Double) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }
}

extension PixelImage {
    /// The image cropped to `region` (its whole area by default) and brought to
    /// `width` × `height` by a crop-and-scale rule, sampling bilinearly.
    ///
    /// Sampling treats pixel `i` as covering `[i, i + 1)` (the half-pixel convention of
    /// PyTorch's `interpolate(mode: "bilinear", align_corners: False)` and OpenCV's
    /// `INTER_LINEAR`), clamps at the image edges, and does not low-pass filter when shrinking:
    /// a large reduction aliases, as a plain bilinear resize does.
    ///
    /// - Throws: ``ImageError`` `.badCropRect` when `region` is empty or not inside the image,
    ///   `.badSize` when the target size is empty or over ``ImageDecoder/maximumPixelCount``.
    package func cropped(
        to region: PixelRect? = nil, scaledTo width: Int, _ height: Int, by rule: CropAndScale
    ) throws(ImageError) -> PixelImage {
        guard width > 0, height > 0, width * height <= ImageDecoder.maximumPixelCount else {
            throw ImageError(.badSize, "cannot scale an image to \(width)×\(height) pixels")
        }
        let region = region ?? PixelRect(x: 0, y: 0, width: Double(self.width), height: Double(self.height))
        let tolerance = 1e-6
        guard region.width > 0, region.height > 0, region.x >= -tolerance, region.y >= -tolerance,
            region.x + region.width <= Double(self.width) + tolerance,
            region.y + region.height <= Double(self.height) + tolerance
        else {
            throw ImageError(
                .badCropRect,
                "crop rectangle (x \(region.x), y \(region.y), \(region.width)×\(region.height)) is not inside the "
                    + "\(self.width)×\(self.height) image")
        }
        switch rule {
        case .scaleFitRotate90CCW, .scaleFillRotate90CCW:
            // Rotating the whole image moves the region with it: the region's top right corner
            // becomes its top left.
            let rotated = EXIFOrientation.left.applied(to: self)
            let turned = PixelRect(
                x: region.y, y: Double(self.width) - region.x - region.width, width: region.height,
                height: region.width)
            return try rotated.cropped(
                to: turned, scaledTo: width, height, by: rule == .scaleFitRotate90CCW ? .scaleFit : .scaleFill)
        case .centerCrop, .scaleFit, .scaleFill:
            return resampled(region: region, width: width, height: height, rule: rule)
        }
    }

    /// One axis of the mapping: output pixel `i` (inside `[first, first + count)`) samples source
    /// coordinate `origin + (i + 0.5 - offset) * step - 0.5`.
    private struct AxisMap {
        var origin: Double
        var offset: Double
        var step: Double
        var first: Int
        var count: Int
    }

    /// The two axis maps of a rule.
    private static func axisMaps(region: PixelRect, width: Int, height: Int, rule: CropAndScale) -> (AxisMap, AxisMap) {
        let sx = Double(width) / region.width
        let sy = Double(height) / region.height
        switch rule {
        case .centerCrop:
            let scale = max(sx, sy)
            // The part of the region that shows, centred.
            let visibleWidth = Double(width) / scale
            let visibleHeight = Double(height) / scale
            let x = region.x + (region.width - visibleWidth) / 2
            let y = region.y + (region.height - visibleHeight) / 2
            return (
                AxisMap(origin: x, offset: 0, step: 1 / scale, first: 0, count: width),
                AxisMap(origin: y, offset: 0, step: 1 / scale, first: 0, count: height)
            )
        case .scaleFit:
            let scale = min(sx, sy)
            let contentWidth = region.width * scale
            let contentHeight = region.height * scale
            let offsetX = (Double(width) - contentWidth) / 2
            let offsetY = (Double(height) - contentHeight) / 2
            // Output pixels whose centres fall on the content.
            func covered(_ offset: Double, _ size: Double, _ limit: Int) -> (Int, Int) {
                let first = max(0, Int((offset - 0.5).rounded(.up)))
                let end = min(limit, Int((offset + size - 0.5).rounded(.up)))
                return (first, max(0, end - first))
            }
            let (firstX, countX) = covered(offsetX, contentWidth, width)
            let (firstY, countY) = covered(offsetY, contentHeight, height)
            return (
                AxisMap(origin: region.x, offset: offsetX, step: 1 / scale, first: firstX, count: countX),
                AxisMap(origin: region.y, offset: offsetY, step: 1 / scale, first: firstY, count: countY)
            )
        default:
            return (
                AxisMap(origin: region.x, offset: 0, step: 1 / sx, first: 0, count: width),
                AxisMap(origin: region.y, offset: 0, step: 1 / sy, first: 0, count: height)
            )
        }
    }

    /// Bilinear resampling through the axis maps; pixels outside the maps stay 0.
    private func resampled(region: PixelRect, width: Int, height: Int, rule: CropAndScale) -> PixelImage {
        let (mapX, mapY) = Self.axisMaps(region: region, width: width, height: height, rule: rule)
        let channels = self.channels.rawValue
        // Per output column: the two source columns and the weight of the second.
        func taps(_ map: AxisMap, _ size: Int) -> [(Int, Int, Float)] {
            (0..<map.count).map { index in
                let position = map.origin + (Double(map.first + index) + 0.5 - map.offset) * map.step - 0.5
                let clamped = min(max(position, 0), Double(size - 1))
                let low = Int(clamped.rounded(.down))
                return (low, min(low + 1, size - 1), Float(clamped - Double(low)))
            }
        }
        let columns = taps(mapX, self.width)
        let rows = taps(mapY, self.height)
        var out = [UInt8](repeating: 0, count: width * height * channels)
        let sourceWidth = self.width
        pixels.withUnsafeBufferPointer { source in
            out.withUnsafeMutableBufferPointer { destination in
                for (rowIndex, (top, bottom, wy)) in rows.enumerated() {
                    let y = mapY.first + rowIndex
                    for (columnIndex, (left, right, wx)) in columns.enumerated() {
                        let x = mapX.first + columnIndex
                        let a = (top * sourceWidth + left) * channels
                        let b = (top * sourceWidth + right) * channels
                        let c = (bottom * sourceWidth + left) * channels
                        let d = (bottom * sourceWidth + right) * channels
                        let to = (y * width + x) * channels
                        for k in 0..<channels {
                            let upper = Float(source[a + k]) + (Float(source[b + k]) - Float(source[a + k])) * wx
                            let lower = Float(source[c + k]) + (Float(source[d + k]) - Float(source[c + k])) * wx
                            let value = upper + (lower - upper) * wy
                            destination[to + k] = UInt8(min(max(value.rounded(), 0), 255))
                        }
                    }
                }
            }
        }
        return PixelImage(width: width, height: height, channels: self.channels, pixels: out)
    }
}
