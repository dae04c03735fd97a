/// Options for one prediction.
///
/// Tessera accepts and ignores both settings: it always runs on the CPU and allocates its
/// own outputs.
///
/// ```swift
/// let output = try model.prediction(from: input, options: MLPredictionOptions())
/// ```
public final class MLPredictionOptions {
    /// Whether to run on the CPU only (deprecated by Apple in favour of
    /// `MLModelConfiguration.computeUnits`); Tessera always does.
    public var usesCPUOnly = false
    /// Caller-allocated output buffers by output name; Tessera ignores them and returns new
    /// arrays.
    public var outputBackings: [String: Any] = [:]

    /// Creates default options.
    public init() {}
}
