/// The processing units a model or tensor computation may use.
///
/// Tessera runs everything on the CPU; the other cases exist so Core ML code compiles, and
/// behave like `.cpuOnly`.
public enum MLComputeUnits: Int, Sendable, Hashable, CaseIterable {
    /// The CPU only.
    case cpuOnly = 0
    /// The CPU and the GPU (on Linux: the CPU).
    case cpuAndGPU = 1
    /// Every available unit (on Linux: the CPU).
    case all = 2
    /// The CPU and the Neural Engine (on Linux: the CPU).
    case cpuAndNeuralEngine = 3
}

/// The compute policy determining what compute device(s) to execute ML workloads on.
///
/// On Linux every policy runs on the CPU; the policy is still recorded and readable so code
/// written for Core ML keeps its structure.
///
/// ```swift
/// let y = withMLTensorComputePolicy(.cpuOnly) { x.softmax() }
/// ```
public struct MLComputePolicy: Sendable, Hashable, CustomStringConvertible, CustomReflectable {
    /// The compute units the policy names.
    package let computeUnits: MLComputeUnits

    /// CPU only.
    public static var cpuOnly: MLComputePolicy { MLComputePolicy(.cpuOnly) }
    /// GPU if available, else CPU (on Linux: CPU).
    public static var cpuAndGPU: MLComputePolicy { MLComputePolicy(.cpuAndGPU) }

    /// A policy from compute units.
    public init(_ computeUnits: MLComputeUnits) {
        self.computeUnits = computeUnits
    }

    public var description: String { "MLComputePolicy(\(computeUnits))" }

    /// The policy's compute units, for debuggers and `dump`.
    public var customMirror: Mirror { Mirror(self, children: ["computeUnits": computeUnits]) }

    /// The policy in force for the current task (`.cpuOnly` unless set with
    /// ``withMLTensorComputePolicy(_:_:)-7xw1o``).
    @TaskLocal package static var current = MLComputePolicy(.cpuOnly)
}

/// Runs `body` with `computePolicy` as the task-local compute policy, restoring the previous
/// one afterwards.
public func withMLTensorComputePolicy<R>(
    _ computePolicy: MLComputePolicy, _ body: () async throws -> R
) async rethrows -> R {
    try await MLComputePolicy.$current.withValue(computePolicy) { try await body() }
}

/// Runs `body` with `computePolicy` as the task-local compute policy (synchronous variant).
public func withMLTensorComputePolicy<Result>(
    _ computePolicy: MLComputePolicy, _ body: () throws -> Result
) rethrows -> Result {
    try MLComputePolicy.$current.withValue(computePolicy) { try body() }
}
