import Foundation
import TesseraModels
import TesseraMultiArray
import TesseraTensor

/// Classic models: a batch of rows through `predictions(fromBatch:)` on the 1000-tree
/// gradient-boosted ensembles `Benchmarks/peers/classic_trees.py DIR --make-models` makes
/// (an XGBoost regressor with one double input per column, a scikit-learn one with one
/// multi-array input), on the rows it saves (`classic_rows.npy`, float64 `[rows, columns]`).
///
/// The timed region is the batch prediction only: the providers are built first, as the
/// peers' timings start from a NumPy matrix.
///
/// - Returns: Per model, `ms` (median) and `rows`; also written to
///   `DIR/classic_tessera.json` for `classic_trees.py` to compare.
@discardableResult
func runClassicBenchmarks(modelsDirectory: URL) -> [String: Any] {
    print("\n## Classic models (predictions(fromBatch:), median of repeated batches)")
    var figures: [String: Any] = [:]
    let rowsURL = modelsDirectory.appendingPathComponent("classic_rows.npy")
    guard let matrix = try? NumPyArray(contentsOf: rowsURL), matrix.shape.count == 2 else {
        print(
            "classic: no \(rowsURL.path); make it with .build/classic-venv/bin/python "
                + "Benchmarks/peers/classic_trees.py \(modelsDirectory.path) --make-models")
        return figures
    }
    let rows = matrix.shape[0]
    let columns = matrix.shape[1]
    let values = matrix.doubles
    for name in ["classic_xgb_1000", "classic_sklearn_gbr_1000"] {
        let url = modelsDirectory.appendingPathComponent("\(name).mlmodel")
        guard let model = try? MLModel(contentsOf: url) else {
            print("\(name): cannot load \(url.path)")
            continue
        }
        let inputs = model.modelDescription.inputOrder
        let providers: [any MLFeatureProvider] = (0..<rows).map { row in
            let slice = Array(values[row * columns..<(row + 1) * columns])
            if inputs.count == 1 {
                let array = MLMultiArray(MLShapedArray<Double>(scalars: slice, shape: [columns]))
                return MLDictionaryFeatureProvider(features: [inputs[0]: MLFeatureValue(multiArray: array)])
            }
            var features: [String: MLFeatureValue] = [:]
            for (column, input) in inputs.enumerated() { features[input] = MLFeatureValue(double: slice[column]) }
            return MLDictionaryFeatureProvider(features: features)
        }
        let batch = MLArrayBatchProvider(array: providers)
        let timing = measure(warmups: 1, iterations: 7) { blackHole(try? model.predictions(fromBatch: batch)) }
        report("\(name) \(rows) rows", timing, String(format: "%.2f µs/row", timing.median * 1e6 / Double(rows)))
        figures[name] = ["ms": timing.median * 1e3, "rows": rows]
    }
    if let data = try? JSONSerialization.data(withJSONObject: figures, options: [.prettyPrinted, .sortedKeys]) {
        try? data.write(to: modelsDirectory.appendingPathComponent("classic_tessera.json"))
    }
    return figures
}
