/// An estimate of how long a parallel loop takes to reach a waiting worker: the time from the
/// caller opening the loop to a polling worker seeing it, which is mostly one cache-line transfer
/// between the two cores.
///
/// On a virtual machine the two cores can be near (sharing a cache complex) or far apart, and
/// the host moves them between the two from one minute to the next. On this project's
/// two-vCPU machine a round trip of one cache line took 60–130 ns when near and 310–350 ns when
/// far; everything one core writes and the other reads costs as much more, which changes which
/// way of splitting a layer is fastest (``DepthwiseBlock``). The estimate follows the
/// minimum of each batch of ``batchSize`` samples, since a sample is also late whenever the
/// worker was late to look, never early.
///
/// ```swift
/// var latency = HandoffLatency()
/// for sample in [90, 85, 400, 88, 95, 87, 86, 91] { latency.add(nanoseconds: sample) }
/// latency.estimate  // 85
/// ```
package struct HandoffLatency: Sendable {
    /// Samples per batch: the batch's minimum moves the estimate.
    package static let batchSize = 8

    /// The estimate in nanoseconds, or `nil` before the first batch is complete.
    package private(set) var estimate: Int?
    private var batchMinimum = Int.max
    private var batchCount = 0

    /// No estimate yet.
    package init() {}

    /// Adds one sample. At the end of a batch the estimate moves a quarter of the way to the
    /// batch's minimum (or takes it, for the first batch).
    package mutating func add(nanoseconds sample: Int) {
        batchMinimum = Swift.min(batchMinimum, Swift.max(0, sample))
        batchCount += 1
        guard batchCount == Self.batchSize else { return }
        estimate = estimate.map { $0 + (batchMinimum - $0) / 4 } ?? batchMinimum
        batchMinimum = .max
        batchCount = 0
    }
}
