import Foundation
import TesseraCoreVideo
import TesseraImaging

// Image feature values: a CVPixelBuffer, or a PNG/JPEG file decoded, cropped, scaled and
// converted to the pixel format a model takes, upright by its EXIF tag or by a given
// `CGImagePropertyOrientation`. Core ML's `cgImage:` initialisers are absent:
// Linux has no CoreGraphics, and a CGImage stand-in would be a second pixel-buffer type with
// nothing behind it; decode files with `init(imageAt:…)` or fill a `CVPixelBuffer` instead.

extension MLFeatureValue {
    /// Creates an image value that refers to a pixel buffer (no copy).
    ///
    /// ```swift
    /// var buffer: CVPixelBuffer?
    /// CVPixelBufferCreate(kCFAllocatorDefault, 224, 224, kCVPixelFormatType_32BGRA, nil, &buffer)
    /// let value = MLFeatureValue(pixelBuffer: buffer!)
    /// value.type                         // .image
    /// ```
    public convenience init(pixelBuffer value: CVPixelBuffer) { self.init(storage: .image(value)) }

    /// The pixel buffer, or `nil` when the value is not an image.
    ///
    /// ```swift
    /// let stylized = output.featureValue(for: "stylizedImage")?.imageBufferValue
    /// ```
    public var imageBufferValue: CVPixelBuffer? {
        if case .image(let buffer) = storage { return buffer }
        return nil
    }

    /// Creates an image value from a PNG or JPEG file, upright (its EXIF orientation applied),
    /// cropped and scaled to a size, in a pixel format.
    ///
    /// Options: ``ImageOption/cropRect`` (a `CGRect` in normalized coordinates, 0…1, origin at
    /// the **bottom left** as Vision measures regions of interest; default the whole image) and
    /// ``ImageOption/cropAndScale`` (a `VNImageCropAndScaleOption` raw value; default
    /// `.scaleFill`). Scaling is bilinear (see `Docs/Architecture.md`).
    ///
    /// ```swift
    /// let photo = try MLFeatureValue(
    ///     imageAt: url, pixelsWide: 224, pixelsHigh: 224, pixelFormatType: kCVPixelFormatType_32BGRA,
    ///     options: [.cropAndScale: VNImageCropAndScaleOption.centerCrop.rawValue])
    /// ```
    ///
    /// - Throws: ``MLModelError`` `.io` when the file cannot be read or is not a whole PNG or JPEG
    ///   file; `.featureType` for a 0×0 or too large image, a crop rectangle outside the image,
    ///   an unknown option value or an unsupported pixel format.
    public convenience init(
        imageAt url: URL, pixelsWide: Int, pixelsHigh: Int, pixelFormatType: OSType,
        options: [MLFeatureValue.ImageOption: Any]? = nil
    ) throws {
        try self.init(
            pixelBuffer: Self.decodeImage(
                at: url, orientation: nil, pixelsWide: pixelsWide, pixelsHigh: pixelsHigh,
                pixelFormatType: pixelFormatType, options: options))
    }

    /// Creates an image value from a PNG or JPEG file turned upright by a given orientation
    /// (instead of the file's EXIF tag), then cropped and scaled to a size, in a pixel format.
    ///
    /// The orientation says how the file's stored pixels are shown: `.right` rotates them 90°
    /// clockwise, `.up` uses them as stored even when the file carries another tag. The crop
    /// rectangle and the crop-and-scale rule apply to the turned image, as
    /// ``init(imageAt:pixelsWide:pixelsHigh:pixelFormatType:options:)`` describes.
    ///
    /// ```swift
    /// // A camera frame saved without its EXIF tag, taken with the phone held upright.
    /// let frame = try MLFeatureValue(
    ///     imageAt: url, orientation: .right, pixelsWide: 224, pixelsHigh: 224,
    ///     pixelFormatType: kCVPixelFormatType_32BGRA)
    /// ```
    ///
    /// - Throws: as ``init(imageAt:pixelsWide:pixelsHigh:pixelFormatType:options:)``.
    public convenience init(
        imageAt url: URL, orientation: CGImagePropertyOrientation, pixelsWide: Int, pixelsHigh: Int,
        pixelFormatType: OSType, options: [MLFeatureValue.ImageOption: Any]? = nil
    ) throws {
        try self.init(
            pixelBuffer: Self.decodeImage(
                at: url, orientation: orientation, pixelsWide: pixelsWide, pixelsHigh: pixelsHigh,
                pixelFormatType: pixelFormatType, options: options))
    }

    /// Creates an image value from a PNG or JPEG file in the size and pixel format an image
    /// constraint asks for (its default size, even when the constraint allows others).
    ///
    /// ```swift
    /// let constraint = model.modelDescription.inputDescriptionsByName["image"]!.imageConstraint!
    /// let value = try MLFeatureValue(imageAt: url, constraint: constraint, options: nil)
    /// ```
    ///
    /// - Throws: as ``init(imageAt:pixelsWide:pixelsHigh:pixelFormatType:options:)``.
    public convenience init(
        imageAt url: URL, constraint: MLImageConstraint, options: [MLFeatureValue.ImageOption: Any]? = nil
    ) throws {
        try self.init(
            imageAt: url, pixelsWide: constraint.pixelsWide, pixelsHigh: constraint.pixelsHigh,
            pixelFormatType: constraint.pixelFormatType, options: options)
    }

    /// Creates an image value from a PNG or JPEG file turned upright by a given orientation, in
    /// the size and pixel format an image constraint asks for (its default size).
    ///
    /// ```swift
    /// let constraint = model.modelDescription.inputDescriptionsByName["image"]!.imageConstraint!
    /// let value = try MLFeatureValue(imageAt: url, orientation: .left, constraint: constraint, options: nil)
    /// ```
    ///
    /// - Throws: as ``init(imageAt:pixelsWide:pixelsHigh:pixelFormatType:options:)``.
    public convenience init(
        imageAt url: URL, orientation: CGImagePropertyOrientation, constraint: MLImageConstraint,
        options: [MLFeatureValue.ImageOption: Any]? = nil
    ) throws {
        try self.init(
            imageAt: url, orientation: orientation, pixelsWide: constraint.pixelsWide,
            pixelsHigh: constraint.pixelsHigh, pixelFormatType: constraint.pixelFormatType, options: options)
    }

    /// Reads, decodes, turns upright (by `orientation`, or the file's EXIF tag when `nil`), crops,
    /// scales and converts an image file to a pixel buffer.
    static func decodeImage(
        at url: URL, orientation: CGImagePropertyOrientation?, pixelsWide: Int, pixelsHigh: Int,
        pixelFormatType: OSType, options: [ImageOption: Any]?
    ) throws(MLModelError) -> CVPixelBuffer {
        let name = url.lastPathComponent
        let data: Data
        do {
            data = try Data(readingFile: url)
        } catch {
            throw MLModelError(.io, "cannot read the image file \(url.path): \(error.localizedDescription)")
        }
        // Both enumerations carry EXIF's values 1...8, so the conversion never fails.
        let turn = orientation.map { EXIFOrientation(rawValue: UInt16($0.rawValue)) ?? .up }
        return try Self.convert { () throws(ImageError) in
            let image = try ImageDecoder.decode(data, name: name, orientation: turn)
            let (region, rule) = try Self.cropAndScale(options, imageWidth: image.width, imageHeight: image.height)
            return try image.cropped(to: region, scaledTo: pixelsWide, pixelsHigh, by: rule)
                .pixelBuffer(format: pixelFormatType)
        }
    }

    /// The crop region in pixels (top-left origin) and the crop-and-scale rule of the options.
    static func cropAndScale(_ options: [ImageOption: Any]?, imageWidth: Int, imageHeight: Int) throws(ImageError)
        -> (PixelRect?, CropAndScale)
    {
        var rule = CropAndScale.scaleFill
        if let raw = options?[.cropAndScale] {
            let number: UInt? =
                switch raw {
                case let option as VNImageCropAndScaleOption: option.rawValue
                case let value as UInt: value
                case let value as Int: value >= 0 ? UInt(value) : nil
                case let value as NSNumber: value.uintValue
                default: nil
                }
            guard let number, let known = CropAndScale(rawValue: number) else {
                throw ImageError(.badCropRect, "cropAndScale option \(raw) is not a VNImageCropAndScaleOption value")
            }
            rule = known
        }
        guard let raw = options?[.cropRect] else { return (nil, rule) }
        guard let rect = raw as? CGRect else {
            throw ImageError(.badCropRect, "cropRect option \(raw) is not a CGRect")
        }
        let tolerance = 1e-9
        guard rect.width > 0, rect.height > 0, rect.minX >= -tolerance, rect.minY >= -tolerance,
            rect.maxX <= 1 + tolerance, rect.maxY <= 1 + tolerance
        else {
            throw ImageError(
                .badCropRect,
                "cropRect \(rect) is not a non-empty rectangle inside the image's normalized coordinates (0...1)")
        }
        let width = Double(imageWidth)
        let height = Double(imageHeight)
        let region = PixelRect(
            x: Double(rect.minX) * width, y: (1 - Double(rect.maxY)) * height, width: Double(rect.width) * width,
            height: Double(rect.height) * height)
        return (region, rule)
    }

    /// Runs an image conversion, turning its ``ImageError`` into ``MLModelError``.
    static func convert<T>(_ body: () throws(ImageError) -> T) throws(MLModelError) -> T {
        do {
            return try body()
        } catch {
            throw MLModelError(error)
        }
    }

    /// Whether two pixel buffers are the same buffer or hold the same size, format and pixels.
    static func samePixels(_ a: CVPixelBuffer, _ b: CVPixelBuffer) -> Bool {
        if a === b { return true }
        guard a.width == b.width, a.height == b.height, a.pixelFormatType == b.pixelFormatType,
            a.planes.count == b.planes.count
        else { return false }
        let layout = PixelFormatLayout.of(a.pixelFormatType)
        for (index, (planeA, planeB)) in zip(a.planes, b.planes).enumerated() {
            let rowBytes = planeA.width * (layout?.planes[index].bytesPerPixel ?? 1)
            for row in 0..<planeA.height
            where memcmp(
                planeA.baseAddress + row * planeA.bytesPerRow, planeB.baseAddress + row * planeB.bytesPerRow, rowBytes)
                != 0
            {
                return false
            }
        }
        return true
    }
}

extension MLModelError {
    /// The Core ML error for an image that cannot be decoded or converted: `.io` for a file that
    /// is not a whole PNG or JPEG, `.featureType` for sizes, crops and formats.
    init(_ error: ImageError) {
        let code: Code =
            switch error.kind {
            case .unknownFormat, .corrupt: .io
            case .badSize, .badCropRect, .unsupportedPixelFormat: .featureType
            case .allocationFailed: .generic
            }
        self.init(code, error.message, underlyingError: error)
    }
}

extension MLFeatureValue {
    /// A key of the options an image feature value is made with.
    ///
    /// ```swift
    /// let options: [MLFeatureValue.ImageOption: Any] = [
    ///     .cropRect: CGRect(x: 0, y: 0, width: 0.5, height: 0.5),
    ///     .cropAndScale: VNImageCropAndScaleOption.scaleFit.rawValue,
    /// ]
    /// ```
    public struct ImageOption: RawRepresentable, Hashable, Sendable {
        /// The key's string.
        public let rawValue: String

        /// Creates a key from its string.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// Creates a key from its string.
        public init(_ rawValue: String) { self.rawValue = rawValue }

        /// The region of the image to use: a `CGRect` in normalized coordinates (0…1, origin at
        /// the bottom left, as Vision's regions of interest).
        public static let cropRect = ImageOption("cropRect")

        /// How the image (or its ``cropRect``) becomes the target size: a
        /// `VNImageCropAndScaleOption` or its raw value.
        public static let cropAndScale = ImageOption("cropAndScale")
    }
}

/// How an image is cropped and scaled to a model's input size. **Linux stand-in** for Vision's
/// enumeration (Tessera has no Vision framework), so the options of
/// ``MLFeatureValue/init(imageAt:pixelsWide:pixelsHigh:pixelFormatType:options:)`` are written as
/// on Apple platforms.
///
/// ```swift
/// VNImageCropAndScaleOption.centerCrop.rawValue     // 0
/// ```
public enum VNImageCropAndScaleOption: UInt, Sendable, Hashable {
    /// Scale until the shorter side fits, keeping the aspect ratio; crop the longer side's
    /// excess evenly from both ends.
    case centerCrop = 0
    /// Scale until the longer side fits, keeping the aspect ratio; centre, with black
    /// (transparent) pixels around.
    case scaleFit = 1
    /// Scale each axis to the target size, changing the aspect ratio.
    case scaleFill = 2
    /// Rotate 90° counter-clockwise, then ``scaleFit``.
    case scaleFitRotate90CCW = 0x101
    /// Rotate 90° counter-clockwise, then ``scaleFill``.
    case scaleFillRotate90CCW = 0x102
}
