/// A batch provider backed by an array of feature providers.
///
/// ```swift
/// let batch = MLArrayBatchProvider(array: [first, second])
/// batch.count                                   // 2
/// let columns = try MLArrayBatchProvider(dictionary: ["x": [1.0, 2.0]])   // two providers
/// ```
public final class MLArrayBatchProvider: MLBatchProvider {
    /// The feature providers, in order.
    public let array: [any MLFeatureProvider]

    /// Creates a batch from feature providers.
    public init(array: [any MLFeatureProvider]) {
        self.array = array
    }

    /// Creates a batch from columns: feature names to one value per provider.
    ///
    /// Values convert as in ``MLDictionaryFeatureProvider/init(dictionary:)``.
    ///
    /// - Throws: ``MLModelError`` with code `.featureType` when the columns have different
    ///   lengths or a value cannot be a feature value.
    public init(dictionary: [String: [Any]]) throws {
        let lengths = Set(dictionary.values.map(\.count))
        guard lengths.count <= 1 else {
            let described = dictionary.map { "\($0.key): \($0.value.count)" }.sorted().joined(separator: ", ")
            throw MLModelError(.featureType, "batch columns have different lengths (\(described))")
        }
        let count = lengths.first ?? 0
        var providers: [any MLFeatureProvider] = []
        providers.reserveCapacity(count)
        for index in 0..<count {
            var features: [String: MLFeatureValue] = [:]
            for (name, column) in dictionary {
                features[name] = try MLDictionaryFeatureProvider.featureValue(from: column[index], name: name)
            }
            providers.append(MLDictionaryFeatureProvider(features: features))
        }
        self.array = providers
    }

    /// The number of providers.
    public var count: Int { array.count }

    /// The provider at `index`.
    ///
    /// - Precondition: `index` is in `0..<count`.
    public func features(at index: Int) -> any MLFeatureProvider {
        precondition(
            array.indices.contains(index), "[MLArrayBatchProvider] index \(index) is out of range 0..<\(array.count)")
        return array[index]
    }
}
