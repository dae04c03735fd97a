import Foundation
import TesseraImaging

extension FuzzTarget {
    /// A PNG file: libpng's decode (through ``ImageDecoder``), the `eXIf` orientation, then a
    /// crop-and-scale to a small size (``decodeAndScale(_:)``).
    static let png = FuzzTarget(
        name: "png", summary: "a PNG file (ImageDecoder, EXIF orientation, crop and scale)",
        run: decodeAndScale, seeds: { imageSeeds($0, extension: "png") })

    /// A JPEG file: libjpeg-turbo's decode (through ``ImageDecoder``), the APP1 EXIF orientation,
    /// then a crop-and-scale to a small size (``decodeAndScale(_:)``).
    static let jpeg = FuzzTarget(
        name: "jpeg", summary: "a JPEG file (ImageDecoder, EXIF orientation, crop and scale)",
        run: decodeAndScale, seeds: { imageSeeds($0, extension: "jpg") })

    /// Decodes an image file as `MLFeatureValue(imageAt:…)` does and, when it decodes to at
    /// most 2²⁰ pixels, scales it to 7 × 5 by centre crop and by fit after a 90° turn.
    @Sendable static func decodeAndScale(_ data: Data) {
        guard let image = try? ImageDecoder.decode(data, name: "input"), image.width * image.height <= 1 << 20
        else { return }
        _ = try? image.cropped(scaledTo: 7, 5, by: .centerCrop)
        _ = try? image.cropped(scaledTo: 7, 5, by: .scaleFitRotate90CCW)
    }

    /// The image fixtures (`Tests/Fixtures/images/*.<extension>`): good, oriented, truncated,
    /// empty and oversized-header files.
    static func imageSeeds(_ fixtures: URL, extension fileExtension: String) -> [Data] {
        let folder = fixtures.appendingPathComponent("images")
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).sorted()
        return names.filter { $0.hasSuffix(".\(fileExtension)") }.compactMap {
            try? Data(contentsOf: folder.appendingPathComponent($0))
        }
    }
}
