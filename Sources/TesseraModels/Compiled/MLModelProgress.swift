/// **Tessera extension**: how far a model load or compile has got.
///
/// Pass a handler to ``MLModel/compileModel(at:progress:)`` or
/// ``MLModel/init(contentsOf:configuration:progress:)``; it is called on the loading thread
/// at the start and end of each phase, and during long byte-oriented phases (weight copying
/// and verification) about every 4 MiB, so keep it cheap.
///
/// ```swift
/// let model = try MLModel(contentsOf: compiledURL, configuration: MLModelConfiguration()) { progress in
///     print(progress.phase, progress.completedBytes, "/", progress.totalBytes)
/// }
/// ```
public struct MLModelProgress: Sendable, Equatable, CustomStringConvertible {
    /// A step of loading or compiling.
    public enum Phase: String, Sendable, Equatable {
        /// Reading and checking the model package or compiled file (compile and load).
        case reading
        /// Checking a compiled model's checksums (load of a compiled model). The content
        /// checksum runs alongside parsing and lowering: its end (every byte done) is reported
        /// when the load has waited for it, after the lowering began.
        case verifying
        /// Decoding the specification and program (load).
        case parsing
        /// Converting and laying out weights (compile).
        case packingWeights
        /// Writing the compiled file (compile).
        case writing
        /// Preparing the program for prediction (load).
        case lowering
        /// Finished.
        case done
    }

    /// The current phase.
    public let phase: Phase
    /// Bytes of the phase's work done so far.
    public let completedBytes: Int
    /// Bytes of the phase's work in all (0 when the phase is not measured in bytes).
    public let totalBytes: Int

    /// The fraction of the phase done, from 0 to 1 (1 for phases without a byte count).
    public var fractionCompleted: Double {
        totalBytes > 0 ? Double(completedBytes) / Double(totalBytes) : 1
    }

    /// `"<phase> <completed>/<total> bytes"`.
    public var description: String { "\(phase.rawValue) \(completedBytes)/\(totalBytes) bytes" }
}

/// Receives progress reports; see ``MLModelProgress``.
public typealias MLModelProgressHandler = @Sendable (MLModelProgress) -> Void

/// Reports progress to an optional handler.
struct ProgressReporter {
    /// The handler, or `nil` to report nothing.
    let handler: MLModelProgressHandler?

    /// Reports `phase` with a byte count.
    func report(_ phase: MLModelProgress.Phase, _ completed: Int = 0, of total: Int = 0) {
        handler?(MLModelProgress(phase: phase, completedBytes: completed, totalBytes: total))
    }
}
