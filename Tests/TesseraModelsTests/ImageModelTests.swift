import Foundation
import TesseraCoreVideo
import TesseraModels
import TesseraMultiArray
import TesseraTensor
import Testing
import _TesseraTestSupport

/// One coremltools image model and the PyTorch result for a bundled PNG
/// (`tools/make_image_fixtures.py`).
struct ImageModelFixture: Decodable {
    var model: String?
    var input: String
    var output: String
    var shape: [Int]?
    var expected: [Double]?
    var width: Int?
    var height: Int?
    var bgr: [Int]?

    static let all: [String: ImageModelFixture] = {
        let data = try! Data(contentsOf: Fixtures.url("images/models.json"))
        return try! JSONDecoder().decode([String: ImageModelFixture].self, from: data)
    }()
}

func imageFixture(_ name: String) -> URL { Fixtures.url("images/\(name)") }

@Suite("Image models (coremltools ML programs against PyTorch)")
struct ImageModelTests {
    static let featureCases = ImageModelFixture.all.keys.filter { $0 != "image_to_image" }.sorted()

    @Test(
        "image inputs match PyTorch: RGB, BGR, grayscale, scale and bias, ranges, enumerated sizes",
        arguments: featureCases)
    func features(_ name: String) async throws {
        let fixture = try #require(ImageModelFixture.all[name])
        let model = try MLModel(contentsOf: imageFixture("\(fixture.model ?? name).mlpackage"))
        let description = try #require(model.modelDescription.inputDescriptionsByName["image"])
        #expect(description.type == .image)
        let constraint = try #require(description.imageConstraint)
        // Decode at the file's own size (the flexible models take several).
        let file = imageFixture(fixture.input)
        let probe = try MLFeatureValue(imageAt: file, constraint: constraint).imageBufferValue!
        let size =
            fixture.input.contains("24x20") ? (24, 20) : (CVPixelBufferGetWidth(probe), CVPixelBufferGetHeight(probe))
        let value = try MLFeatureValue(
            imageAt: file, pixelsWide: size.0, pixelsHigh: size.1, pixelFormatType: constraint.pixelFormatType)
        let input = try MLDictionaryFeatureProvider(dictionary: ["image": value])
        let output = try await model.prediction(from: input)
        let array = try #require(output.featureValue(for: fixture.output)?.multiArrayValue)
        #expect(array.shape.map(\.intValue) == fixture.shape)
        let got = MLShapedArray<Double>(converting: array).scalars
        let expected = try #require(fixture.expected)
        try #require(got.count == expected.count)
        for (a, b) in zip(got, expected) { #expect(abs(a - b) <= 1e-4 + 1e-4 * abs(b), "\(a) vs \(b)") }
    }

    @Test("image values keep their buffer, compare by pixels and describe their size and format")
    func imageValues() throws {
        let format = kCVPixelFormatType_32BGRA
        let a = try MLFeatureValue(
            imageAt: imageFixture("smooth.png"), pixelsWide: 20, pixelsHigh: 10, pixelFormatType: format)
        let b = try MLFeatureValue(
            imageAt: imageFixture("smooth.png"), pixelsWide: 20, pixelsHigh: 10, pixelFormatType: format)
        let other = try MLFeatureValue(
            imageAt: imageFixture("smooth.png"), pixelsWide: 20, pixelsHigh: 10, pixelFormatType: format,
            options: [.cropRect: CGRect(x: 0, y: 0, width: 0.5, height: 0.5)])
        let buffer = try #require(a.imageBufferValue)
        #expect(a.type == .image)
        #expect(MLFeatureValue(pixelBuffer: buffer).imageBufferValue === buffer)
        #expect(a.isEqual(to: b))
        #expect(!a.isEqual(to: other))
        #expect(a.description == "Image : 20 x 10 'BGRA'")
        #expect(MLFeatureValue(double: 1).imageBufferValue == nil)
    }

    @Test(
        "NeuralNetwork image inputs take the scaler's scale and biases in the color space's order",
        arguments: ["nn_image_rgb", "nn_image_bgr", "nn_image_gray"])
    func neuralNetworkImages(_ name: String) async throws {
        let data = try Data(contentsOf: imageFixture("models-more.json"))
        let fixture = try #require(try JSONDecoder().decode([String: ImageModelFixture].self, from: data)[name])
        let model = try MLModel(contentsOf: imageFixture(try #require(fixture.model)))
        let constraint = try #require(model.modelDescription.inputDescriptionsByName["image"]?.imageConstraint)
        let value = try MLFeatureValue(imageAt: imageFixture(fixture.input), constraint: constraint)
        let output = try await model.prediction(from: MLDictionaryFeatureProvider(dictionary: ["image": value]))
        let array = try #require(output.featureValue(for: fixture.output)?.multiArrayValue)
        #expect(array.shape.map(\.intValue).reduce(1, *) == (fixture.shape ?? []).reduce(1, *))
        let got = MLShapedArray<Double>(converting: array).scalars
        let expected = try #require(fixture.expected)
        try #require(got.count == expected.count)
        for (a, b) in zip(got, expected) { #expect(abs(a - b) <= 1e-4 + 1e-4 * abs(b), "\(a) vs \(b)") }
    }

    @Test("a float16 grayscale input takes a OneComponent16Half buffer")
    func grayscaleFloat16() async throws {
        let data = try Data(contentsOf: imageFixture("models-more.json"))
        let fixture = try #require(
            try JSONDecoder().decode([String: ImageModelFixture].self, from: data)["image_gray16"])
        let model = try MLModel(contentsOf: imageFixture("image_gray16.mlpackage"))
        let constraint = try #require(model.modelDescription.inputDescriptionsByName["image"]?.imageConstraint)
        #expect(constraint.pixelFormatType == kCVPixelFormatType_OneComponent16Half)
        let value = try MLFeatureValue(imageAt: imageFixture(fixture.input), constraint: constraint)
        let output = try await model.prediction(from: MLDictionaryFeatureProvider(dictionary: ["image": value]))
        let array = try #require(output.featureValue(for: fixture.output)?.multiArrayValue)
        let got = MLShapedArray<Double>(converting: array).scalars
        let expected = try #require(fixture.expected)
        try #require(got.count == expected.count)
        for (a, b) in zip(got, expected) { #expect(abs(a - b) <= 0.05 + 2e-3 * abs(b), "\(a) vs \(b)") }
    }

    @Test("an image output comes back as a BGRA pixel buffer, clamped and rounded")
    func imageOutput() throws {
        let fixture = try #require(ImageModelFixture.all["image_to_image"])
        let model = try MLModel(contentsOf: imageFixture("image_to_image.mlpackage"))
        let outputDescription = try #require(model.modelDescription.outputDescriptionsByName["styled"])
        #expect(outputDescription.type == .image)
        #expect(outputDescription.imageConstraint?.pixelFormatType == kCVPixelFormatType_32BGRA)
        let constraint = try #require(model.modelDescription.inputDescriptionsByName["image"]?.imageConstraint)
        let value = try MLFeatureValue(imageAt: imageFixture(fixture.input), constraint: constraint)
        let output = try model.prediction(from: MLDictionaryFeatureProvider(dictionary: ["image": value]))
        let buffer = try #require(output.featureValue(for: "styled")?.imageBufferValue)
        #expect(CVPixelBufferGetPixelFormatType(buffer) == kCVPixelFormatType_32BGRA)
        let width = CVPixelBufferGetWidth(buffer)
        let height = CVPixelBufferGetHeight(buffer)
        #expect((width, height) == (fixture.width, fixture.height))
        CVPixelBufferLockBaseAddress(buffer, .readOnly)
        defer { CVPixelBufferUnlockBaseAddress(buffer, .readOnly) }
        let base = CVPixelBufferGetBaseAddress(buffer)!.assumingMemoryBound(to: UInt8.self)
        let rowBytes = CVPixelBufferGetBytesPerRow(buffer)
        var got: [Int] = []
        for y in 0..<height {
            for x in 0..<width { for c in 0..<3 { got.append(Int(base[y * rowBytes + 4 * x + c])) } }
        }
        let expected = try #require(fixture.bgr)
        #expect(got.count == expected.count)
        let worst = zip(got, expected).map { abs($0 - $1) }.max() ?? 0
        #expect(worst <= 1, "largest difference \(worst)")
        #expect(got.contains(0) && got.contains(255), "the fixture exercises clamping")
    }

    @Test("wrong pixel formats, wrong sizes and sizes outside a range throw featureType")
    func badBuffers() throws {
        let fixed = try MLModel(contentsOf: imageFixture("image_rgb.mlpackage"))
        let flexible = try MLModel(contentsOf: imageFixture("image_flexible.mlpackage"))
        let enumerated = try MLModel(contentsOf: imageFixture("image_enumerated.mlpackage"))
        func buffer(_ width: Int, _ height: Int, _ format: OSType) -> CVPixelBuffer {
            var made: CVPixelBuffer?
            CVPixelBufferCreate(kCFAllocatorDefault, width, height, format, nil, &made)
            return made!
        }
        let cases: [(MLModel, CVPixelBuffer, String)] = [
            (fixed, buffer(16, 12, kCVPixelFormatType_OneComponent8), "format 'L008'"),
            (fixed, buffer(16, 13, kCVPixelFormatType_32BGRA), "16×13"),
            (flexible, buffer(65, 12, kCVPixelFormatType_32BGRA), "widths 8...64"),
            (flexible, buffer(7, 7, kCVPixelFormatType_32BGRA), "7×7"),
            (enumerated, buffer(20, 24, kCVPixelFormatType_32BGRA), "16×12, 24×20"),
        ]
        for (model, pixels, fragment) in cases {
            let input = try MLDictionaryFeatureProvider(dictionary: ["image": MLFeatureValue(pixelBuffer: pixels)])
            expectModelError(.featureType, containing: ["input \"image\"", fragment]) {
                _ = try model.prediction(from: input)
            }
        }
        // A buffer of the right size in another color format converts.
        let argb = try MLDictionaryFeatureProvider(dictionary: [
            "image": MLFeatureValue(pixelBuffer: buffer(16, 12, kCVPixelFormatType_32ARGB))
        ])
        _ = try fixed.prediction(from: argb)
    }

    @Test("damaged files and crop rectangles outside the image throw typed errors")
    func badFiles() throws {
        let format = kCVPixelFormatType_32BGRA
        for name in ["truncated.png", "truncated.jpg", "garbage.png", "not-an-image.txt"] {
            expectModelError(.io, containing: [name]) {
                _ = try MLFeatureValue(
                    imageAt: imageFixture(name), pixelsWide: 8, pixelsHigh: 8, pixelFormatType: format)
            }
        }
        for name in ["huge.png", "huge.jpg"] {
            expectModelError(.featureType, containing: [name, "pixels"]) {
                _ = try MLFeatureValue(
                    imageAt: imageFixture(name), pixelsWide: 8, pixelsHigh: 8, pixelFormatType: format)
            }
        }
        expectModelError(.io, containing: ["missing.png"]) {
            _ = try MLFeatureValue(
                imageAt: imageFixture("missing.png"), pixelsWide: 8, pixelsHigh: 8, pixelFormatType: format)
        }
        for rect in [CGRect(x: 0.5, y: 0, width: 0.6, height: 0.5), CGRect(x: -0.1, y: 0, width: 0.5, height: 0.5)] {
            expectModelError(.featureType, containing: ["cropRect"]) {
                _ = try MLFeatureValue(
                    imageAt: imageFixture("smooth.png"), pixelsWide: 8, pixelsHigh: 8, pixelFormatType: format,
                    options: [.cropRect: rect])
            }
        }
        expectModelError(.featureType, containing: ["cropAndScale"]) {
            _ = try MLFeatureValue(
                imageAt: imageFixture("smooth.png"), pixelsWide: 8, pixelsHigh: 8, pixelFormatType: format,
                options: [.cropAndScale: 7])
        }
    }

    @Test("cropRect is normalized with a bottom-left origin; the top-left quarter is y 0.5")
    func cropRectOrigin() throws {
        let format = kCVPixelFormatType_32BGRA
        let quarter = try MLFeatureValue(
            imageAt: imageFixture("smooth.png"), pixelsWide: 20, pixelsHigh: 15, pixelFormatType: format,
            options: [.cropRect: CGRect(x: 0, y: 0.5, width: 0.5, height: 0.5)])
        let whole = try MLFeatureValue(
            imageAt: imageFixture("smooth.png"), pixelsWide: 40, pixelsHigh: 30, pixelFormatType: format)
        let a = quarter.imageBufferValue!
        let b = whole.imageBufferValue!
        let pa = CVPixelBufferGetBaseAddress(a)!.assumingMemoryBound(to: UInt8.self)
        let pb = CVPixelBufferGetBaseAddress(b)!.assumingMemoryBound(to: UInt8.self)
        let ra = CVPixelBufferGetBytesPerRow(a)
        let rb = CVPixelBufferGetBytesPerRow(b)
        for y in 0..<15 {
            for x in 0..<80 { #expect(pa[y * ra + x] == pb[y * rb + x]) }
        }
    }

    @Test("a package whose blobs carry older coremltools' uninitialised padding bits loads and predicts")
    func olderPackage() throws {
        struct Fixture: Decodable {
            var x: [Float]
            var y: [Double]
        }
        let fixture = try JSONDecoder().decode(
            Fixture.self, from: Data(contentsOf: imageFixture("old_padding.json")))
        let model = try MLModel(contentsOf: imageFixture("old_padding.mlpackage"))
        let x = MLShapedArray<Float>(scalars: fixture.x, shape: [1, 8])
        let output = try model.prediction(
            from: MLDictionaryFeatureProvider(dictionary: ["x": MLFeatureValue(shapedArray: x)]))
        let y = try #require(output.featureValue(for: "y")?.shapedArrayValue(of: Float.self))
        for (a, b) in zip(y.scalars, fixture.y) { #expect(abs(Double(a) - b) <= 1e-5) }
    }
}
