import Tessera
import TesseraKernels

/// `tessera demo`: the embedded digit classifier run through `MLModel`, with `MLTensor`
/// pre-processing (pixels 0–16 → 0–1) and post-processing (top 3 per sample).
///
/// The model and the 20 held-out samples ship as resources of this executable
/// (`Resources/`, made by `tools/make_demo_model.py`), so the demo needs no network.
enum DigitsDemo {
    struct Sample: Decodable {
        var pixels: [Int]
        var label: String
    }

    struct Samples: Decodable {
        var labels: [String]
        var samples: [Sample]
    }

    static func run() throws {
        guard let packageURL = Bundle.module.url(forResource: "DigitsClassifier", withExtension: "mlpackage"),
            let samplesURL = Bundle.module.url(forResource: "digits-samples", withExtension: "json")
        else {
            throw CLIError("the demo model is missing from the tessera bundle; rebuild with `swift build`")
        }
        let samples = try JSONDecoder().decode(Samples.self, from: Data(contentsOf: samplesURL))
        let count = samples.samples.count
        print(
            "Tessera demo: a Core ML digit classifier run with MLModel (OpenBLAS \(KernelThreads.blasSummary))\n")

        // 1. Compile and load, as a Core ML app does.
        let loadStart = DispatchTime.now().uptimeNanoseconds
        let compiled = try MLModel.compileModel(at: packageURL)
        defer { try? FileManager.default.removeItem(at: compiled.deletingLastPathComponent()) }
        let model = try MLModel(contentsOf: compiled)
        let loadMilliseconds = milliseconds(since: loadStart)
        let description = model.modelDescription
        let about = description.metadata[.description] as? String ?? ""
        print("model    \(packageURL.lastPathComponent): \(about)")
        let input = description.inputDescriptionsByName.values.map(\.description).joined(separator: "; ")
        print("         input \(input); outputs \(description.outputOrder.joined(separator: ", "))")
        print(String(format: "         compiled and loaded in %.1f ms\n", loadMilliseconds))

        // 2. Pre-processing with MLTensor: every sample's 0–16 pixels scaled to 0–1 in one fused pass.
        let raw = MLTensor(shape: [count, 64], scalars: samples.samples.flatMap { $0.pixels.map(Int32.init) })
        let scaled = (raw.cast(to: Float.self) / 16).shapedArray(of: Float.self)

        // 3. One prediction per sample through the MLModel API, timed.
        var probabilities: [Float] = []
        var predicted: [String] = []
        var latencies: [Double] = []
        for index in 0..<count {
            let image = MLShapedArray<Float>(scalars: scaled[index].scalars, shape: [1, 64])
            let features = try MLDictionaryFeatureProvider(dictionary: ["image": MLFeatureValue(shapedArray: image)])
            let start = DispatchTime.now().uptimeNanoseconds
            let output = try model.prediction(from: features)
            latencies.append(milliseconds(since: start))
            predicted.append(output.featureValue(for: "classLabel")?.stringValue ?? "?")
            let dictionary = output.featureValue(for: "classLabel_probs")?.dictionaryValue ?? [:]
            probabilities += samples.labels.map { dictionary[$0]?.floatValue ?? 0 }
        }

        // 4. Post-processing with MLTensor: the top 3 classes of every sample.
        let top = topK(MLTensor(shape: [count, samples.labels.count], scalars: probabilities), k: 3)

        print(
            "pre-processing  MLTensor: \(count) × 64 pixels cast to float and scaled 0–16 → 0–1 in one fused pass")
        print(
            "post-processing MLTensor: top 3 per sample by argmax and masking over the [\(count), 10] probabilities\n")
        let header = [
            pad("#", 2, left: true), pad("true", 5, left: true), pad("predicted", 10, left: true) + " ",
            pad("probability", 12, left: true),
        ]
        print(header.joined(separator: " ") + "   top 3")
        var correct = 0
        for index in 0..<count {
            let truth = samples.samples[index].label
            if predicted[index] == truth { correct += 1 }
            let ranked = top[index].map { "\(samples.labels[$0.index]) \(String(format: "%.3f", $0.value))" }
            let mark = predicted[index] == truth ? " " : "✗"
            let row = [
                pad("\(index + 1)", 2, left: true), pad(truth, 5, left: true),
                pad(predicted[index], 10, left: true) + mark,
                pad(String(format: "%.4f", top[index][0].value), 12, left: true),
            ]
            print(row.joined(separator: " ") + "   " + ranked.joined(separator: " · "))
        }
        let sorted = latencies.sorted()
        print(
            String(
                format: "\naccuracy %d/%d (%.1f%%) · latency per prediction: median %.3f ms, min %.3f ms, mean %.3f ms",
                correct, count, 100 * Double(correct) / Double(count), sorted[count / 2], sorted[0],
                latencies.reduce(0, +) / Double(count)))
    }

    /// The `k` largest values of each row and their column indices, found with MLTensor:
    /// `argmax` along the row, then the winner is masked out and the next one taken.
    static func topK(_ rows: MLTensor, k: Int) -> [[(index: Int, value: Float)]] {
        let columns = rows.shape[1]
        let columnIndex = MLTensor(shape: [1, columns], scalars: (0..<columns).map(Float.init))
        var remaining = rows
        var picks: [(indices: MLTensor, values: MLTensor)] = []
        for _ in 0..<k {
            let best = remaining.argmax(alongAxis: 1, keepRank: true)
            picks.append((best, remaining.max(alongAxes: 1, keepRank: true)))
            let chosen = (columnIndex .== best.cast(to: Float.self)).cast(to: Float.self)
            remaining = remaining - chosen * 2  // probabilities are ≤ 1: a chosen column drops below every other
        }
        MLTensor.materialize(picks.flatMap { [$0.indices, $0.values] })
        let indices = picks.map { $0.indices.scalars(of: Int32.self) }
        let values = picks.map { $0.values.scalars(of: Float.self) }
        return (0..<rows.shape[0]).map { row in (0..<k).map { (Int(indices[$0][row]), values[$0][row]) } }
    }

    static func pad(_ text: String, _ width: Int, left: Bool) -> String {
        let padding = String(repeating: " ", count: max(0, width - text.count))
        return left ? padding + text : text + padding
    }

    static func milliseconds(since start: UInt64) -> Double {
        Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6
    }
}
