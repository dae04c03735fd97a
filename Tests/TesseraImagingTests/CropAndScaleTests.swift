import Foundation
import TesseraImaging
import Testing
import _TesseraTestSupport

/// One crop-and-scale reference: Vision's geometry sampled by PyTorch's `grid_sample`.
struct ResizeFixture: Decodable, CustomTestStringConvertible {
    var rule: String
    var width: Int
    var height: Int
    var region: [Double]?
    var pixels: [Int]

    var testDescription: String { "\(rule) to \(width)x\(height)\(region.map { " of \($0)" } ?? "")" }

    static let all: [ResizeFixture] = {
        struct File: Decodable { var cases: [ResizeFixture] }
        let data = try! Data(contentsOf: Fixtures.url("images/resize.json"))
        return try! JSONDecoder().decode(File.self, from: data).cases
    }()
}

@Suite("Crop and scale (Vision's rules, bilinear)")
struct CropAndScaleTests {
    static let source = try! ImageDecoder.decode(imageData("smooth.png"), name: "smooth.png")

    @Test("matches PyTorch's bilinear sampling of Vision's geometry within 1", arguments: ResizeFixture.all)
    func matchesReference(_ fixture: ResizeFixture) throws {
        let rule: CropAndScale =
            switch fixture.rule {
            case "centerCrop": .centerCrop
            case "scaleFit": .scaleFit
            default: .scaleFill
            }
        let region = fixture.region.map { PixelRect(x: $0[0], y: $0[1], width: $0[2], height: $0[3]) }
        let out = try Self.source.cropped(to: region, scaledTo: fixture.width, fixture.height, by: rule)
        let got = colorBytes(out)
        try #require(got.count == fixture.pixels.count)
        let differences = zip(got, fixture.pixels).map { abs($0 - $1) }
        #expect(differences.max() ?? 0 <= 1, "largest difference \(differences.max() ?? 0)")
    }

    @Test("the same size with scaleFill is the identity")
    func identity() throws {
        let out = try Self.source.cropped(scaledTo: Self.source.width, Self.source.height, by: .scaleFill)
        #expect(out == Self.source)
    }

    @Test("rotate-90 rules turn the image counter-clockwise first")
    func rotated() throws {
        let out = try Self.source.cropped(scaledTo: Self.source.height, Self.source.width, by: .scaleFillRotate90CCW)
        #expect(out == EXIFOrientation.left.applied(to: Self.source))
    }

    @Test("crop rectangles outside the image and empty targets throw")
    func badCrops() {
        for region in [
            PixelRect(x: -1, y: 0, width: 10, height: 10), PixelRect(x: 35, y: 0, width: 10, height: 10),
            PixelRect(x: 0, y: 0, width: 0, height: 10), PixelRect(x: 0, y: 25, width: 10, height: 10),
        ] {
            #expect(throws: ImageError.self) {
                _ = try Self.source.cropped(to: region, scaledTo: 8, 8, by: .scaleFill)
            }
        }
        #expect(throws: ImageError.self) { _ = try Self.source.cropped(scaledTo: 0, 8, by: .centerCrop) }
    }
}
