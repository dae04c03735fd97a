import Foundation
import TesseraImaging
import Testing
import _TesseraTestSupport

/// What `tools/make_image_fixtures.py` recorded of a file, decoded upright by PIL.
struct DecodedFixture: Decodable {
    var width: Int
    var height: Int
    var channels: Int
    var pixels: [Int]

    static let all: [String: DecodedFixture] = {
        let data = try! Data(contentsOf: Fixtures.url("images/decoded.json"))
        return try! JSONDecoder().decode([String: DecodedFixture].self, from: data)
    }()
}

/// The image's color (or gray) bytes, without alpha.
func colorBytes(_ image: PixelImage) -> [Int] {
    if image.channels == .gray { return image.pixels.map(Int.init) }
    return image.pixels.enumerated().filter { $0.offset % 4 != 3 }.map { Int($0.element) }
}

func imageData(_ name: String) throws -> Data { try Data(contentsOf: Fixtures.url("images/\(name)")) }

@Suite("Image decoding (PNG, JPEG, EXIF orientation)")
struct ImageDecoderTests {
    @Test(
        "files decode to PIL's upright pixels: PNG exactly, JPEG within 1",
        arguments: DecodedFixture.all.keys.sorted())
    func decodesLikePIL(_ name: String) throws {
        let expected = try #require(DecodedFixture.all[name])
        let image = try ImageDecoder.decode(imageData(name), name: name)
        #expect(image.width == expected.width)
        #expect(image.height == expected.height)
        #expect((image.channels == .gray ? 1 : 3) == expected.channels)
        let got = colorBytes(image)
        try #require(got.count == expected.pixels.count)
        let worst = zip(got, expected.pixels).map { abs($0 - $1) }.max() ?? 0
        #expect(worst <= (name.hasSuffix(".png") ? 0 : 1), "largest difference \(worst)")
    }

    /// The `jpeg` fuzz target's findings (`Tests/Fixtures/fuzz/jpeg/`): a 183-byte
    /// arithmetic-coded file declaring 54742 × 517 pixels whose data ends in the first row took
    /// seconds to decode in full from zero bits.
    @Test("the jpeg fuzz target's findings throw .corrupt, naming the row where the data ends")
    func jpegFuzzFindings() throws {
        let directory = Fixtures.url("fuzz/jpeg")
        let inputs = try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)
        #expect(!inputs.isEmpty)
        for input in inputs {
            let name = input.lastPathComponent
            do {
                _ = try ImageDecoder.decode(Data(contentsOf: input), name: name)
                Issue.record("\(name) decoded")
            } catch let error as ImageError {
                #expect(error.kind == .corrupt, "\(name): \(error.message)")
                #expect(error.message.contains("data ends at row 1 of 517"), "\(error.message)")
            }
        }
    }

    @Test("damaged, empty and huge files throw typed errors before allocating the pixels")
    func badFiles() throws {
        let cases: [(String, ImageError.Kind)] = [
            ("truncated.png", .corrupt), ("truncated.jpg", .corrupt), ("truncated-arith.jpg", .corrupt),
            ("garbage.png", .corrupt),
            ("not-an-image.txt", .unknownFormat), ("empty.png", .corrupt), ("huge.png", .badSize),
            ("huge.jpg", .badSize),
        ]
        for (name, kind) in cases {
            let data = try imageData(name)
            #expect(throws: ImageError.self, "\(name)") { _ = try ImageDecoder.decode(data, name: name) }
            do {
                _ = try ImageDecoder.decode(data, name: name)
            } catch {
                #expect(error.kind == kind, "\(name): \(error.message)")
                #expect(error.message.contains(name))
            }
        }
    }

    @Test("the orientation tag is found in JPEG APP1 and PNG eXIf")
    func orientationTags() throws {
        #expect(EXIFOrientation.inJPEG(try imageData("oriented-6.jpg")) == .right)
        #expect(EXIFOrientation.inJPEG(try imageData("oriented-8.jpg")) == .left)
        #expect(EXIFOrientation.inJPEG(try imageData("smooth.jpg")) == .up)
        #expect(EXIFOrientation.inPNG(try imageData("oriented-6.png")) == .right)
        #expect(EXIFOrientation.inPNG(try imageData("smooth.png")) == .up)
    }
}
