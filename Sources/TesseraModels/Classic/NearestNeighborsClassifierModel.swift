import Foundation

/// `kNearestNeighborsClassifier`: the `k` stored samples nearest to the input by squared
/// Euclidean distance vote for their labels, each with weight 1 (`uniformWeighting`) or
/// `1 / distance` (`inverseDistanceWeighting`; samples at distance 0 then take all the
/// weight).
///
/// Neighbours are found by a linear scan whatever index the file names: a k-d tree finds
/// the same neighbours. Distance ties keep the sample order; a tie in votes goes to the
/// smallest label (as scikit-learn's `mode` does). With no samples the default label is
/// returned. Probabilities, when the description has that output, are the vote shares.
struct NearestNeighborsClassifierModel: ClassicModel {
    let interface: ClassicInterface
    let reader: FeatureVectorReader
    /// `count × width` samples, row-major, in float64.
    let samples: [Double]
    let count: Int
    let width: Int
    /// Each sample's index in the distinct labels.
    let sampleClass: [Int]
    /// The distinct labels' indices in ascending label order (for tie-breaking).
    let labelRank: [Int]
    let k: Int
    let inverseDistance: Bool
    let outputs: ClassifierOutputs
    let defaultLabel: CoreMLSpec.ClassLabels?

    init(_ spec: CoreMLSpec.NearestNeighborsClassifier, _ interface: ClassicInterface, file: String) throws {
        self.interface = interface
        width = Int(spec.dimensions)
        for (index, sample) in spec.samples.enumerated() where sample.count != width {
            throw interface.invalid(
                "sample \(index) has \(sample.count) values, but numberOfDimensions is \(width)", file: file)
        }
        guard spec.sampleLabels.count == spec.samples.count else {
            throw interface.invalid(
                "the model has \(spec.samples.count) samples but \(spec.sampleLabels.count) labels", file: file)
        }
        guard spec.k >= 1 else { throw interface.invalid("numberOfNeighbors is \(spec.k)", file: file) }
        k = Int(clamping: spec.k)
        count = spec.samples.count
        samples = spec.samples.flatMap { $0.map(Double.init) }
        inverseDistance = spec.inverseDistance
        defaultLabel = spec.defaultLabel
        let distinct = spec.distinctLabels
        let labels = count == 0 ? (spec.defaultLabel ?? distinct) : distinct
        outputs = try ClassifierOutputs(labels: labels, interface: interface, file: file)
        switch (spec.sampleLabels, distinct) {
        case (.strings(let all), .strings(let unique)):
            let position = Dictionary(uniqueKeysWithValues: unique.enumerated().map { ($1, $0) })
            sampleClass = all.map { position[$0]! }
            labelRank = unique.indices.sorted { unique[$0] < unique[$1] }
        case (.int64s(let all), .int64s(let unique)):
            let position = Dictionary(uniqueKeysWithValues: unique.enumerated().map { ($1, $0) })
            sampleClass = all.map { position[$0]! }
            labelRank = unique.indices.sorted { unique[$0] < unique[$1] }
        default:
            sampleClass = []
            labelRank = []
        }
        reader = try FeatureVectorReader(interface, exactWidth: width, file: file)
    }

    func predict(_ row: any MLFeatureProvider) throws -> [String: MLFeatureValue] {
        guard count > 0 else { return outputs.features(probabilities: nil, chosen: 0) }
        let x = try reader.read(row, interface)
        var distances = [(distance: Double, sample: Int)]()
        distances.reserveCapacity(count)
        samples.withUnsafeBufferPointer { s in
            for i in 0..<count {
                var sum = 0.0
                for j in 0..<width {
                    let d = x[j] - s[i * width + j]
                    sum += d * d
                }
                distances.append((sum, i))
            }
        }
        distances.sort { $0.distance < $1.distance || ($0.distance == $1.distance && $0.sample < $1.sample) }
        let nearest = distances.prefix(k)
        var votes = [Double](repeating: 0, count: outputs.labels.count)
        let exact = nearest.filter { $0.distance == 0 }
        for neighbour in inverseDistance && !exact.isEmpty ? Array(exact) : Array(nearest) {
            let weight = inverseDistance && exact.isEmpty ? 1 / neighbour.distance.squareRoot() : 1
            votes[sampleClass[neighbour.sample]] += weight
        }
        var best = labelRank[0]
        for candidate in labelRank where votes[candidate] > votes[best] { best = candidate }
        let total = votes.reduce(0, +)
        let shares = votes.map { $0 / total }
        return shares.withUnsafeBufferPointer { outputs.features(probabilities: $0, chosen: best) }
    }
}
