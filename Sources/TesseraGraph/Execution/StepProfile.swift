import Synchronization

/// The measured time of every step of the plans run inside one
/// ``GraphExecutor/withStepProfile(_:)-swift.type.method`` scope: one ``Run`` per plan run, each
/// step with its kind, the operation it computes, the kernel path it took and its wall time.
///
/// The executor's step loop reads the clock around each step only while a scope is open
/// (``isActive``, one relaxed atomic load per plan run, then the task-local profile); outside
/// every scope it runs exactly as before. Steps run in order on the thread that materializes,
/// so their times add up to the plan run's time (the loops a step splits across the kernel
/// workers count once, as wall time).
package final class StepProfile: Sendable {
    /// One step of one plan run.
    package struct Step: Sendable {
        /// The step's position in its plan.
        package var index: Int
        /// The step's kind in the plan: `view`, `fused`, `kernel`, `fusedReduce`,
        /// `fusedSoftmax`, `reduceConcat`, `rowFused` or `convEpilogue`.
        package var kind: String
        /// The operation the step computes, without parameters: `conv2d`, `matmul`, `softmax`,
        /// `elementwise`, `reshape`, …
        package var operation: String
        /// The kernel path it ran: `packed im2col conv`, `depthwise conv`, `OpenBLAS sgemm`,
        /// `packed GEMM`, `fused elementwise`, `softmax`, `row-fused reductions`, …
        package var path: String
        /// The shape of the step's result.
        package var shape: [Int]
        /// Wall time of the step, in nanoseconds.
        package var nanoseconds: UInt64
    }

    /// One run of one plan.
    package struct Run: Sendable {
        /// Every step of the plan, in the order they ran.
        package var steps: [Step]
        /// Wall time of the whole step loop, in nanoseconds: the steps' sum plus the loop's own
        /// bookkeeping, less the time the profile spent naming the steps.
        package var nanoseconds: UInt64
    }

    private let recorded = Mutex<[Run]>([])

    /// Open scopes in the process; the step loop looks for a profile only while it is above 0.
    fileprivate static let openScopes = Atomic<Int>(0)

    /// The innermost profile of the current task, or `nil` outside every scope.
    @TaskLocal static var current: StepProfile?

    /// An empty profile.
    package init() {}

    /// The runs recorded so far, in the order they finished.
    package var runs: [Run] { recorded.withLock { $0 } }

    /// Forgets the runs recorded so far (a warm-up's, say).
    package func reset() { recorded.withLock { $0.removeAll() } }

    func record(_ run: Run) { recorded.withLock { $0.append(run) } }

    /// The profile the step loop should fill: `nil` unless a scope is open somewhere and the
    /// current task is inside one.
    @inline(__always)
    static var active: StepProfile? {
        openScopes.load(ordering: .relaxed) > 0 ? current : nil
    }

    /// The nanoseconds from `start` to now on the continuous clock.
    @inline(__always)
    static func nanoseconds(since start: ContinuousClock.Instant) -> UInt64 {
        let components = (ContinuousClock.now - start).components
        return UInt64(Swift.max(0, components.seconds)) &* 1_000_000_000
            &+ UInt64(Swift.max(0, components.attoseconds) / 1_000_000_000)
    }
}

// The synchronous and asynchronous `withStepProfile` resolve by context, as `TaskLocal.withValue` does.
// swift-format-ignore: AmbiguousTrailingClosureOverload
extension GraphExecutor {
    /// Runs `body` and records the time of every plan step that materializations on this task
    /// run inside it, into `profile`: for `tessera plan MODEL --measure`, which predicts inside
    /// a scope and sums the steps by operation and by kernel path.
    ///
    /// ```swift
    /// let profile = StepProfile()
    /// try GraphExecutor.withStepProfile(profile) { _ = try model.prediction(from: input) }
    /// for step in profile.runs[0].steps { print(step.operation, step.path, step.nanoseconds) }
    /// ```
    @discardableResult
    package static func withStepProfile<Result>(_ profile: StepProfile, _ body: () throws -> Result) rethrows
        -> Result
    {
        StepProfile.openScopes.wrappingAdd(1, ordering: .relaxed)
        defer { StepProfile.openScopes.wrappingSubtract(1, ordering: .relaxed) }
        return try StepProfile.$current.withValue(profile, operation: body)
    }

    /// Runs the asynchronous `body` recording into `profile` (see the synchronous form).
    @discardableResult
    package static func withStepProfile<Result>(
        _ profile: StepProfile, _ body: () async throws -> Result
    ) async rethrows -> Result {
        StepProfile.openScopes.wrappingAdd(1, ordering: .relaxed)
        defer { StepProfile.openScopes.wrappingSubtract(1, ordering: .relaxed) }
        return try await StepProfile.$current.withValue(profile, operation: body)
    }
}
