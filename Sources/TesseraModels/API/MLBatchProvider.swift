/// A collection of feature providers: the input or output of a batch prediction.
///
/// ```swift
/// let batch = MLArrayBatchProvider(array: inputs)
/// let outputs = try model.predictions(fromBatch: batch)
/// for index in 0..<outputs.count {
///     print(outputs.features(at: index).featureValue(for: "classLabel")?.stringValue ?? "")
/// }
/// ```
public protocol MLBatchProvider {
    /// The number of feature providers.
    var count: Int { get }

    /// The feature provider at `index`, in `0..<count`.
    func features(at index: Int) -> any MLFeatureProvider
}
