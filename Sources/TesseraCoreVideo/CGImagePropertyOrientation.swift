/// How an image's stored pixels are turned to show it upright: the EXIF orientation tag's
/// values, as ImageIO names them. **Linux stand-in** for ImageIO's enumeration, so the
/// `orientation:` image feature value initialisers are written as on Apple platforms.
///
/// Raw values are EXIF's (tag 0x0112). The name says where the image's top row is shown:
/// ``right`` (6) stores the picture turned 90° counter-clockwise, so it is rotated 90° clockwise
/// to view.
///
/// ```swift
/// let value = try MLFeatureValue(
///     imageAt: url, orientation: .right, pixelsWide: 224, pixelsHigh: 224,
///     pixelFormatType: kCVPixelFormatType_32BGRA)
/// CGImagePropertyOrientation.right.rawValue   // 6
/// ```
public enum CGImagePropertyOrientation: UInt32, Sendable, Hashable {
    /// Stored upright (the default).
    case up = 1
    /// Mirrored left to right.
    case upMirrored = 2
    /// Rotated 180°.
    case down = 3
    /// Mirrored top to bottom.
    case downMirrored = 4
    /// Mirrored left to right, then rotated 90° counter-clockwise to view (transposed).
    case leftMirrored = 5
    /// Rotated 90° clockwise to view.
    case right = 6
    /// Mirrored left to right, then rotated 90° clockwise to view (transversed).
    case rightMirrored = 7
    /// Rotated 90° counter-clockwise to view.
    case left = 8
}
