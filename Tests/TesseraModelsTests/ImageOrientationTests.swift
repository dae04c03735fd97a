import Foundation
import TesseraCoreVideo
import TesseraModels
import Testing
import _TesseraTestSupport

/// PIL's pixels of `oriented-6.png` turned by each EXIF orientation (`tools/make_image_fixtures.py`).
private struct OrientedFixture: Decodable {
    var width: Int
    var height: Int
    var pixels: [Int]

    static let all: [String: OrientedFixture] = {
        let data = try! Data(contentsOf: Fixtures.url("images/oriented.json"))
        return try! JSONDecoder().decode([String: OrientedFixture].self, from: data)
    }()
}

/// The RGB bytes of a 32-bit BGRA pixel buffer, row by row.
private func rgbBytes(_ buffer: CVPixelBuffer) -> [Int] {
    CVPixelBufferLockBaseAddress(buffer, .readOnly)
    defer { CVPixelBufferUnlockBaseAddress(buffer, .readOnly) }
    let base = CVPixelBufferGetBaseAddress(buffer)!.assumingMemoryBound(to: UInt8.self)
    let rowBytes = CVPixelBufferGetBytesPerRow(buffer)
    var out: [Int] = []
    for y in 0..<CVPixelBufferGetHeight(buffer) {
        for x in 0..<CVPixelBufferGetWidth(buffer) {
            let pixel = base + y * rowBytes + 4 * x
            out += [Int(pixel[2]), Int(pixel[1]), Int(pixel[0])]
        }
    }
    return out
}

@Suite("Image feature values with a given orientation (PIL's transpositions)")
struct ImageOrientationTests {
    @Test(
        "the given orientation replaces the file's EXIF tag and turns the stored pixels as PIL does",
        arguments: (1...8).map { CGImagePropertyOrientation(rawValue: $0)! })
    func orientationReplacesTheTag(_ orientation: CGImagePropertyOrientation) throws {
        let expected = try #require(OrientedFixture.all[String(orientation.rawValue)])
        let value = try MLFeatureValue(
            imageAt: imageFixture("oriented-6.png"), orientation: orientation, pixelsWide: expected.width,
            pixelsHigh: expected.height, pixelFormatType: kCVPixelFormatType_32BGRA)
        let buffer = try #require(value.imageBufferValue)
        #expect(CVPixelBufferGetWidth(buffer) == expected.width)
        #expect(CVPixelBufferGetHeight(buffer) == expected.height)
        #expect(rgbBytes(buffer) == expected.pixels)
    }

    @Test("the file's own tag, given explicitly, decodes as the initialiser without an orientation")
    func explicitTagMatchesTheDefault() throws {
        let url = imageFixture("oriented-6.jpg")
        let format = kCVPixelFormatType_32BGRA
        let tagged = try MLFeatureValue(imageAt: url, pixelsWide: 5, pixelsHigh: 7, pixelFormatType: format)
        let given = try MLFeatureValue(
            imageAt: url, orientation: .right, pixelsWide: 5, pixelsHigh: 7, pixelFormatType: format)
        let stored = try MLFeatureValue(
            imageAt: url, orientation: .up, pixelsWide: 5, pixelsHigh: 7, pixelFormatType: format)
        #expect(tagged.isEqual(to: given))
        #expect(!tagged.isEqual(to: stored))
    }

    @Test("the constraint form takes the constraint's size and format; a crop outside the turned image throws")
    func constraintAndCrop() throws {
        let model = try MLModel(contentsOf: imageFixture("image_rgb.mlpackage"))
        let constraint = try #require(model.modelDescription.inputDescriptionsByName["image"]?.imageConstraint)
        let url = imageFixture("oriented-6.png")
        let value = try MLFeatureValue(imageAt: url, orientation: .left, constraint: constraint, options: nil)
        let sized = try MLFeatureValue(
            imageAt: url, orientation: .left, pixelsWide: constraint.pixelsWide, pixelsHigh: constraint.pixelsHigh,
            pixelFormatType: constraint.pixelFormatType)
        let buffer = try #require(value.imageBufferValue)
        #expect(CVPixelBufferGetWidth(buffer) == constraint.pixelsWide)
        #expect(CVPixelBufferGetHeight(buffer) == constraint.pixelsHigh)
        #expect(CVPixelBufferGetPixelFormatType(buffer) == constraint.pixelFormatType)
        #expect(value.isEqual(to: sized))
        #expect(throws: MLModelError.self) {
            _ = try MLFeatureValue(
                imageAt: url, orientation: .left, constraint: constraint,
                options: [.cropRect: CGRect(x: 0.5, y: 0.5, width: 0.8, height: 0.8)])
        }
    }
}
