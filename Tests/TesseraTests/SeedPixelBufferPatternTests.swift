import Tessera
import Testing

/// The demo's shape classifier and its pictures.
let resources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("Sources/tessera/Resources")
let shapesPackage = resources.appendingPathComponent("ShapesClassifier.mlpackage")

// Core ML app code that works with pixel buffers, written as on Apple platforms with only the
// import changed: make a buffer, fill it, check it, classify it.

/// Makes a BGRA buffer as camera code does, with CoreGraphics-compatibility attributes.
func makeFrame(width: Int, height: Int, brightness: UInt8) -> CVPixelBuffer? {
    let attrs =
        [
            kCVPixelBufferCGImageCompatibilityKey: kCFBooleanTrue,
            kCVPixelBufferCGBitmapContextCompatibilityKey: kCFBooleanTrue,
        ] as CFDictionary
    var pixelBuffer: CVPixelBuffer?
    let status = CVPixelBufferCreate(
        kCFAllocatorDefault, width, height, kCVPixelFormatType_32BGRA, attrs, &pixelBuffer)
    guard status == kCVReturnSuccess, let buffer = pixelBuffer else { return nil }
    CVPixelBufferLockBaseAddress(buffer, [])
    defer { CVPixelBufferUnlockBaseAddress(buffer, []) }
    let base = CVPixelBufferGetBaseAddress(buffer)!.assumingMemoryBound(to: UInt8.self)
    let bytesPerRow = CVPixelBufferGetBytesPerRow(buffer)
    for y in 0..<height {
        for x in 0..<width {
            let pixel = base + y * bytesPerRow + x * 4
            pixel[0] = brightness  // B
            pixel[1] = brightness  // G
            pixel[2] = x < width / 2 ? brightness : 40  // R
            pixel[3] = 255
        }
    }
    return buffer
}

/// The glare check: the share of near-white pixels in a camera frame.
func glareFraction(_ pixelBuffer: CVPixelBuffer) -> Double {
    CVPixelBufferLockBaseAddress(pixelBuffer, .readOnly)
    defer { CVPixelBufferUnlockBaseAddress(pixelBuffer, .readOnly) }
    guard CVPixelBufferGetPixelFormatType(pixelBuffer) == kCVPixelFormatType_32BGRA,
        let baseAddress = CVPixelBufferGetBaseAddress(pixelBuffer)
    else { return 0 }
    let width = CVPixelBufferGetWidth(pixelBuffer)
    let height = CVPixelBufferGetHeight(pixelBuffer)
    let bytesPerRow = CVPixelBufferGetBytesPerRow(pixelBuffer)
    let buffer = baseAddress.assumingMemoryBound(to: UInt8.self)
    var bright = 0
    for y in 0..<height {
        for x in 0..<width {
            let offset = y * bytesPerRow + x * 4
            let luma =
                0.114 * Double(buffer[offset]) + 0.587 * Double(buffer[offset + 1])
                + 0.299 * Double(buffer[offset + 2])
            if luma > 240 { bright += 1 }
        }
    }
    return Double(bright) / Double(width * height)
}

/// A custom input provider that hands the model a pixel buffer.
final class ImageInput: MLFeatureProvider {
    let image: CVPixelBuffer
    init(image: CVPixelBuffer) { self.image = image }
    var featureNames: Set<String> { ["image"] }
    func featureValue(for featureName: String) -> MLFeatureValue? {
        featureName == "image" ? MLFeatureValue(pixelBuffer: image) : nil
    }
}

/// Live labels: classify each frame and keep the label when it is confident.
func liveLabel(_ model: MLModel, frame: CVPixelBuffer) throws -> String? {
    let input = try MLDictionaryFeatureProvider(dictionary: ["image": MLFeatureValue(pixelBuffer: frame)])
    let output = try model.prediction(from: input)
    guard let label = output.featureValue(for: "classLabel")?.stringValue,
        let confidence = output.featureValue(for: "classLabel_probs")?.dictionaryValue[label]?.doubleValue
    else { return nil }
    return confidence > 0.5 ? label : nil
}

@Suite("import Tessera: pixel-buffer code compiles and runs")
struct SeedPixelBufferPatternTests {
    @Test("classify a photo from a file, scaled to the model's image constraint")
    func classifyPhoto() async throws {
        let model = try await MLModel.load(contentsOf: shapesPackage, configuration: MLModelConfiguration())
        guard let constraint = model.modelDescription.inputDescriptionsByName["image"]?.imageConstraint else {
            Issue.record("no image input")
            return
        }
        let photo = resources.appendingPathComponent("shapes/1-circle.png")
        let value = try MLFeatureValue(
            imageAt: photo, constraint: constraint,
            options: [.cropAndScale: VNImageCropAndScaleOption.centerCrop.rawValue])
        let output = try await model.prediction(from: MLDictionaryFeatureProvider(dictionary: ["image": value]))
        #expect(output.featureValue(for: "classLabel")?.stringValue == "circle")
    }

    @Test("the glare check reads a camera frame through the base address and bytes per row")
    func glareCheck() throws {
        let bright = try #require(makeFrame(width: 64, height: 48, brightness: 250))
        let dark = try #require(makeFrame(width: 64, height: 48, brightness: 90))
        #expect(glareFraction(bright) == 0.5)
        #expect(glareFraction(dark) == 0)
    }

    @Test("live labels, a custom image provider and a batch of frames predict from pixel buffers")
    func framesAndBatches() throws {
        let model = try MLModel(contentsOf: shapesPackage)
        var frames: [CVPixelBuffer] = []
        for name in ["1-circle.png", "2-square.jpg", "3-triangle.png", "4-cross.jpg"] {
            let value = try MLFeatureValue(
                imageAt: resources.appendingPathComponent("shapes/\(name)"), pixelsWide: 32, pixelsHigh: 32,
                pixelFormatType: kCVPixelFormatType_32BGRA, options: [.cropAndScale: 0])
            frames.append(try #require(value.imageBufferValue))
        }
        #expect(try liveLabel(model, frame: frames[0]) == "circle")
        let single = try model.prediction(from: ImageInput(image: frames[1]))
        #expect(single.featureValue(for: "classLabel")?.stringValue == "square")
        let batch = MLArrayBatchProvider(array: frames.map { ImageInput(image: $0) })
        let results = try model.predictions(fromBatch: batch)
        let labels = (0..<results.count).map {
            results.features(at: $0).featureValue(for: "classLabel")?.stringValue ?? ""
        }
        #expect(labels == ["circle", "square", "triangle", "cross"])
    }
}
