import Tessera

/// `tessera demo`, part two: an image classifier with an **image input**, run on PNG and JPEG
/// files the way a Core ML app classifies photos.
///
/// Each file is decoded (EXIF orientation applied), center-cropped and scaled to the model's
/// 32 × 32 RGB input by `MLFeatureValue(imageAt:constraint:options:)`, then predicted; the
/// model does its own scale and bias. The model and the eight pictures ship as resources
/// (`Resources/ShapesClassifier.mlpackage`, `Resources/shapes/`, made by
/// `tools/make_demo_image_model.py`).
enum ImageDemo {
    struct Record: Decodable {
        var label: String
    }

    static func run() throws {
        guard let packageURL = Bundle.module.url(forResource: "ShapesClassifier", withExtension: "mlpackage"),
            let samplesURL = Bundle.module.url(forResource: "shapes", withExtension: nil)
        else {
            throw CLIError("the demo image model is missing from the tessera bundle; rebuild with `swift build`")
        }
        let records = try JSONDecoder().decode(
            [String: Record].self, from: Data(contentsOf: samplesURL.appendingPathComponent("labels.json")))
        print("Tessera demo: a Core ML image classifier with an image input, on PNG and JPEG files\n")
        let model = try MLModel(contentsOf: packageURL)
        let about = model.modelDescription.metadata[.description] as? String ?? ""
        print("model    \(packageURL.lastPathComponent): \(about)")
        guard let constraint = model.modelDescription.inputDescriptionsByName["image"]?.imageConstraint else {
            throw CLIError("the demo image model has no image input")
        }
        print("         input image \(constraint.pixelsWide)×\(constraint.pixelsHigh) BGRA; files center-cropped\n")
        print(DigitsDemo.pad("file", 16, left: false) + "  predicted  probability")
        var correct = 0
        var latencies: [Double] = []
        for name in records.keys.sorted() {
            let url = samplesURL.appendingPathComponent(name)
            let start = DispatchTime.now().uptimeNanoseconds
            let image = try MLFeatureValue(
                imageAt: url, constraint: constraint,
                options: [.cropAndScale: VNImageCropAndScaleOption.centerCrop.rawValue])
            let output = try model.prediction(from: MLDictionaryFeatureProvider(dictionary: ["image": image]))
            latencies.append(DigitsDemo.milliseconds(since: start))
            let label = output.featureValue(for: "classLabel")?.stringValue ?? "?"
            let probability = output.featureValue(for: "classLabel_probs")?.dictionaryValue[label]?.doubleValue ?? 0
            let truth = records[name]?.label ?? ""
            if label == truth { correct += 1 }
            print(
                DigitsDemo.pad(name, 16, left: false) + "  " + DigitsDemo.pad(label, 9, left: false)
                    + (label == truth ? " " : "✗") + String(format: " %.3f", probability))
        }
        let sorted = latencies.sorted()
        print(
            String(
                format: "\naccuracy %d/%d · per file (decode, crop, scale, predict): median %.2f ms",
                correct, records.count, sorted[sorted.count / 2]))
    }

}
