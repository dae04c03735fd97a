import Foundation
import TesseraModels
import TesseraMultiArray
import TesseraTensor
import Testing
import _TesseraTestSupport

/// coremltools' own NeuralNetwork-backend tests, harvested by
/// `tools/harvest_coremltools_nn_tests.py` into a directory named by `TESSERA_NN_HARVEST_DIR`
/// (thousands of models, so not committed), run through `MLModel`.
///
/// Opt-in: `TESSERA_NN_HARVEST_DIR=/tmp/nn-harvest swift test --filter NeuralNetworkHarvest`.
/// Writes `outcomes.csv` (one line per case: folder, outcome, layer types, detail) for
/// `tools/summarize_nn_harvest.py`, prints the counts per layer type, and records an issue for
/// every case that loads but predicts wrong values or throws. The indices of a `topK` layer
/// from a model input are compared tie-aware (``tiedIndicesProblem``): Core ML leaves the order
/// of tied values unspecified.
@Suite("NeuralNetwork harvested coremltools tests")
struct NeuralNetworkHarvestTests {
    /// One harvested case's `case.json`: the comparison the coremltools test makes.
    struct Case: Decodable {
        var test: String
        var inputs: [String]
        var outputs: [String]
        var layers: [String]
        /// `allclose` (`atol`, `rtol`), `rel_error` (`delta`), `snr` (`snr`, `psnr`),
        /// `shape` or `moments` (`moments`).
        var comparison: String
        var atol: Double?
        var rtol: Double?
        var delta: Double?
        var snr: Double?
        var psnr: Double?
        var moments: Int?
        /// The `topK` layers from a model input to an indices output (see ``tiedIndicesProblem``).
        var topk: [TopK]?
    }

    /// A `topK` layer reading model input `input` along `axis` and writing output `indices`.
    struct TopK: Decodable {
        var input: String
        var axis: Int
        var indices: String
    }

    enum Outcome: String {
        case pass, wrong, refused
        case loadError = "load error"
        case runError = "run error"
    }

    static var directory: String? { ProcessInfo.processInfo.environment["TESSERA_NN_HARVEST_DIR"] }

    @Test("harvested cases match coremltools' expected outputs", .enabled(if: directory != nil))
    func harvested() throws {
        let root = URL(fileURLWithPath: try #require(Self.directory))
        let files =
            FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil)?
            .compactMap { $0 as? URL }.filter { $0.lastPathComponent == "case.json" }
            .sorted { $0.path < $1.path } ?? []
        var tally: [String: [Outcome: Int]] = [:]
        var totals: [Outcome: Int] = [:]
        var failures: [String] = []
        var perCase = "case,outcome,layers,detail\n"
        for file in files {
            let directory = file.deletingLastPathComponent()
            let harvested = try JSONDecoder().decode(Case.self, from: try Data(contentsOf: file))
            let (outcome, detail) = run(harvested, in: directory)
            for layer in harvested.layers { tally[layer, default: [:]][outcome, default: 0] += 1 }
            totals[outcome, default: 0] += 1
            let relative = directory.path.dropFirst(root.path.count).trimmingCharacters(in: ["/"])
            let quoted = "\"" + detail.replacingOccurrences(of: "\"", with: "'").prefix(300) + "\""
            perCase += "\(relative),\(outcome.rawValue),\(harvested.layers.joined(separator: " ")),\(quoted)\n"
            if outcome != .pass && outcome != .refused {
                failures.append("\(relative) \(harvested.layers) \(outcome.rawValue): \(detail.prefix(300))")
            }
        }
        var report = "layer, pass, wrong, refused, load error, run error\n"
        for layer in tally.keys.sorted() {
            let t = tally[layer]!
            let columns = [Outcome.pass, .wrong, .refused, .loadError, .runError].map { t[$0] ?? 0 }
            report += layer + ", " + columns.map(String.init).joined(separator: ", ") + "\n"
        }
        report += "\(files.count) cases: "
        report += totals.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.value) \($0.key.rawValue)" }
            .joined(separator: ", ")
        print(report)
        try? report.write(to: root.appendingPathComponent("report.txt"), atomically: true, encoding: .utf8)
        try? perCase.write(to: root.appendingPathComponent("outcomes.csv"), atomically: true, encoding: .utf8)
        for failure in failures.prefix(200) { Issue.record(Comment(rawValue: failure)) }
    }

    /// Loads, predicts and compares one case.
    func run(_ harvested: Case, in directory: URL) -> (Outcome, String) {
        let model: MLModel
        do {
            model = try MLModel(contentsOf: directory.appendingPathComponent("model.mlmodel"))
        } catch {
            let message = "\(error)"
            let refused = message.contains("not supported by Tessera") || message.contains("Tessera does not support")
            return (refused ? .refused : .loadError, message)
        }
        do {
            var features: [String: MLFeatureValue] = [:]
            var inputArrays: [String: NumPyArray] = [:]
            for (index, name) in harvested.inputs.enumerated() {
                let array = try NumPyArray(contentsOf: directory.appendingPathComponent("input_\(index).npy"))
                inputArrays[name] = array
                let shape = array.shape.isEmpty ? [1] : array.shape
                features[name] =
                    try array.dtype == "<i4"
                    ? MLFeatureValue(
                        multiArray: MLMultiArray(
                            MLShapedArray<Int32>(scalars: array.ints.map { Int32($0) }, shape: shape)))
                    : MLFeatureValue(
                        multiArray: MLMultiArray(MLShapedArray<Float>(scalars: array.floats, shape: shape)))
            }
            let output = try model.prediction(from: try MLDictionaryFeatureProvider(dictionary: features))
            for (index, name) in harvested.outputs.enumerated() {
                let expected = try NumPyArray(contentsOf: directory.appendingPathComponent("expected_\(index).npy"))
                guard let array = output.featureValue(for: name)?.multiArrayValue else {
                    return (.wrong, "no multi-array output \(name)")
                }
                let got = MLShapedArray<Float>(converting: array).scalars
                let shape = array.shape.map(\.intValue)
                guard got.count == expected.count else {
                    return (.wrong, "\(name): shape \(shape), expected \(expected.shape)")
                }
                if let topK = harvested.topk?.first(where: { $0.indices == name }), let x = inputArrays[topK.input] {
                    if let problem = tiedIndicesProblem(got, expected.floats, shape: shape, input: x, axis: topK.axis) {
                        return (.wrong, "\(name) \(shape): \(problem)")
                    }
                } else if let problem = compare(got, expected.floats, harvested) {
                    return (.wrong, "\(name) \(shape): \(problem)")
                }
            }
            return (.pass, "")
        } catch {
            return (.runError, "\(error)")
        }
    }

    /// Harness rule for `topK` indices: Core ML does not specify the order of tied values
    /// (`TopKLayerParams` says nothing about ties), Tessera orders them by index and NumPy's
    /// reference `argsort` is not stable, so indices of equal values are interchangeable. The
    /// indices pass when, in every slice along `axis`, they are distinct, in range, and pick
    /// from the input `x` exactly the values the reference indices pick, position by position:
    /// then they are a valid top (or bottom) K in the reference's order. `nil` when they pass.
    func tiedIndicesProblem(_ got: [Float], _ expected: [Float], shape: [Int], input x: NumPyArray, axis: Int)
        -> String?
    {
        let inputShape = x.shape.isEmpty ? [1] : x.shape
        guard shape.count == inputShape.count, !shape.isEmpty else {
            return "indices shape \(shape) against input shape \(inputShape)"
        }
        let a = axis < 0 ? axis + shape.count : axis
        guard (0..<shape.count).contains(a) else { return "axis \(axis) out of range for \(shape)" }
        let values = x.floats
        let k = shape[a]
        let n = inputShape[a]
        let inner = shape[(a + 1)...].reduce(1, *)
        let outer = shape[..<a].reduce(1, *)
        for o in 0..<outer {
            for i in 0..<inner {
                var seen = Set<Int>()
                for j in 0..<k {
                    let position = (o * k + j) * inner + i
                    let (g, e) = (got[position], expected[position])
                    guard let index = Int(exactly: g), (0..<n).contains(index), seen.insert(index).inserted else {
                        return "[\(position)] index \(g) is not a distinct index below \(n)"
                    }
                    guard let reference = Int(exactly: e), (0..<n).contains(reference) else {
                        return "[\(position)] reference index \(e) out of range"
                    }
                    let (picked, wanted) = (
                        values[(o * n + index) * inner + i], values[(o * n + reference) * inner + i]
                    )
                    if picked != wanted && !(picked.isNaN && wanted.isNaN) {
                        return
                            "[\(position)] index \(index) picks \(picked), the reference's \(reference) picks \(wanted)"
                    }
                }
            }
        }
        return nil
    }

    /// Why `got` fails the case's comparison against `expected`, or `nil` when it passes.
    func compare(_ got: [Float], _ expected: [Float], _ harvested: Case) -> String? {
        let a = got.map(Double.init)
        let b = expected.map(Double.init)
        switch harvested.comparison {
        case "shape":
            return nil
        case "moments":
            let k = harvested.moments ?? 10
            func moments(_ x: [Double]) -> [Double] {
                let mean = x.reduce(0, +) / Double(Swift.max(x.count, 1))
                return (0..<k).map { power in
                    x.map { Foundation.pow($0 - mean, Double(power)) }.reduce(0, +) / Double(Swift.max(x.count, 1))
                }
            }
            for (index, (m, n)) in zip(moments(a), moments(b)).enumerated() where Swift.abs(m - n) >= 1.5e-2 {
                return "moment \(index): \(m), expected \(n)"
            }
            return nil
        case "snr":
            guard !b.isEmpty else { return nil }
            let noise = zip(a, b).map { ($1 - $0) * ($1 - $0) }.reduce(0, +) / Double(b.count) + 1e-7
            let signal = b.map { $0 * $0 }.reduce(0, +) / Double(b.count)
            let peak = b.map { $0 * $0 }.max() ?? 0
            let snr = 10 * Foundation.log10(signal / noise)
            let psnr = 10 * Foundation.log10(peak / noise)
            return snr >= (harvested.snr ?? 30) && psnr >= (harvested.psnr ?? 40) ? nil : "SNR \(snr), PSNR \(psnr)"
        case "rel_error":
            let delta = harvested.delta ?? 0.01
            for (index, (x, y)) in zip(a, b).enumerated() {
                let scale = Swift.max(Swift.abs(y), 1)
                if !(Swift.abs(y / scale - x / scale) <= delta) { return "[\(index)] \(x), expected \(y)" }
            }
            return nil
        default:
            let atol = harvested.atol ?? 1e-4
            let rtol = harvested.rtol ?? 1e-5
            for (index, (x, y)) in zip(a, b).enumerated() where !(Swift.abs(x - y) <= atol + rtol * Swift.abs(y)) {
                if x == y || (x.isNaN && y.isNaN) { continue }
                return "[\(index)] \(x), expected \(y)"
            }
            return nil
        }
    }
}
