import Foundation
import TesseraCoreVideo
import TesseraImaging

extension MLFeatureDescription {
    /// Why a pixel buffer does not satisfy an image constraint (its format or its size), as
    /// the end of a sentence that starts with the feature's name; `nil` when it does.
    static func imageProblem(_ buffer: CVPixelBuffer, _ constraint: MLImageConstraint) -> String? {
        let format = buffer.pixelFormatType
        let accepted: [OSType] =
            switch constraint.colorLayout {
            case .rgb, .bgr:
                [
                    kCVPixelFormatType_32BGRA, kCVPixelFormatType_32ARGB, kCVPixelFormatType_32RGBA,
                    kCVPixelFormatType_24RGB, kCVPixelFormatType_420YpCbCr8BiPlanarFullRange,
                    kCVPixelFormatType_420YpCbCr8BiPlanarVideoRange,
                ]
            case .grayscale: [kCVPixelFormatType_OneComponent8]
            case .grayscaleFloat16: [kCVPixelFormatType_OneComponent16Half]
            }
        if !accepted.contains(format) {
            return "is a pixel buffer of format \(pixelFormatName(format)), but the model expects "
                + accepted.map(pixelFormatName).joined(separator: " or ")
        }
        let width = buffer.width
        let height = buffer.height
        let size = constraint.sizeConstraint
        switch size.type {
        case .unspecified:
            if width == constraint.pixelsWide && height == constraint.pixelsHigh { return nil }
            return "is \(width)×\(height) pixels, but the model expects \(constraint.pixelsWide)×"
                + "\(constraint.pixelsHigh)"
        case .enumerated:
            let sizes =
                size.enumeratedImageSizes.isEmpty
                ? [(constraint.pixelsWide, constraint.pixelsHigh)]
                : size.enumeratedImageSizes.map { ($0.pixelsWide, $0.pixelsHigh) }
            if sizes.contains(where: { $0 == (width, height) }) { return nil }
            return "is \(width)×\(height) pixels, but the model allows only "
                + sizes.map { "\($0.0)×\($0.1)" }.joined(separator: ", ")
        case .range:
            func inside(_ value: Int, _ range: NSRange) -> Bool {
                value >= range.location && (range.length >= Int.max - range.location || value <= NSMaxRange(range))
            }
            if inside(width, size.pixelsWideRange) && inside(height, size.pixelsHighRange) { return nil }
            func describe(_ range: NSRange) -> String {
                range.length >= Int.max - range.location
                    ? "\(range.location)..." : "\(range.location)...\(NSMaxRange(range))"
            }
            return "is \(width)×\(height) pixels, but the model allows widths \(describe(size.pixelsWideRange)) "
                + "and heights \(describe(size.pixelsHighRange))"
        }
    }
}
