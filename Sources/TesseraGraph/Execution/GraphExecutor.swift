import Synchronization
import TesseraKernels

/// What one materialization did: how many steps and kernels ran, how much was fused, and the
/// most memory intermediates held at once.
package struct PlanStatistics: Sendable, Equatable, CustomStringConvertible {
    /// Steps run: fused programs, kernels and views.
    package var steps = 0
    /// Steps that ran a kernel or a fused program (views cost nothing).
    package var kernels = 0
    /// Fused element-wise programs among the kernels.
    package var fusedGroups = 0
    /// Element-wise graph nodes those programs absorbed.
    package var fusedNodes = 0
    /// Convolutions that added a residual and/or applied a clamp (ReLU, ReLU6, `clip`) as they
    /// wrote their output, so that element-wise program ran as no step of its own.
    package var convEpilogues = 0
    /// The most bytes of results allocated by this run alive at once.
    package var peakBytes = 0
    /// Fused programs that wrote their result over a dying intermediate instead of a new buffer.
    package var inPlaceSteps = 0
    /// Whether the plan came from the cache.
    package var planCacheHit = false

    package var description: String {
        "\(steps) steps, \(kernels) kernels (\(fusedGroups) fused programs covering \(fusedNodes) ops, "
            + "\(convEpilogues) convolution epilogues), "
            + "\(inPlaceSteps) in place, peak \(peakBytes) bytes, plan \(planCacheHit ? "cached" : "compiled")"
    }
}

/// Runs graphs: collects what a request needs, finds or compiles a plan, executes it on the
/// kernel layer and records each requested node's value.
///
/// Collecting a request's graph and looking its plan up take a process-wide lock (collection
/// marks nodes); compiling a new plan and running it do not, so materializations from several threads compute
/// at once. A run that starts while another is in flight keeps its loops on its own thread
/// (`KernelThreads.withSerialLoops`); a run alone splits them across every core. Two
/// requests that share a pending subgraph may both compute it; the values are the same
/// (the same plan steps on the same inputs), and the first to finish is recorded. Plans are
/// cached by graph structure and shapes (up to ``planCacheCapacity`` of them) and are
/// immutable, so concurrent runs share them.
package enum GraphExecutor {
    struct State {
        /// The process-wide plans, used outside every ``withPlanCache(_:)-swift.type.method`` scope.
        var cache = PlanCache()
        /// The last snapshot's size, to allocate the next one's arrays once.
        var snapshotSize = (nodes: 16, words: 128)
        var epoch: UInt64 = 0
        var last = PlanStatistics()
    }

    private static let state = Mutex(State())
    /// Plans running now (outside the lock).
    private static let runsInFlight = Atomic<Int>(0)

    /// The most plans kept; past it the cache starts over.
    package static let planCacheCapacity = 512
    /// The most op numbers kept for plan keys; past it they start over with the plans.
    static let opCodeCapacity = 65_536

    /// Materializes `nodes` on the calling thread and returns what the run did.
    ///
    /// Nodes that are already materialized cost nothing.
    @discardableResult
    package static func materialize(_ nodes: [Node]) -> PlanStatistics {
        if nodes.allSatisfy({ $0.value != nil }) { return PlanStatistics() }
        return materialize(nodes, scope: PlanCacheScope.current)
    }

    /// Materializes `nodes` on the calling thread within a memory budget, and returns what the
    /// run did.
    ///
    /// Before anything runs, the plan's peak (``ExecutionPlan/plannedPeakBytes``) is reserved in
    /// ``BufferPool/shared`` (``BufferPool/withReservation(of:budget:_:)``); a plan that needs
    /// more than `memoryLimit` bytes (when given), or more than the pool has room for, throws
    /// and computes nothing: the nodes stay pending and the next request is unaffected.
    ///
    /// - Throws: ``BufferPoolError/budgetExceeded(requested:budget:)``,
    ///   ``BufferPoolError/memoryLimitExceeded(requested:live:limit:)``.
    @discardableResult
    package static func materialize(_ nodes: [Node], memoryLimit: Int?) throws(BufferPoolError) -> PlanStatistics {
        if nodes.allSatisfy({ $0.value != nil }) { return PlanStatistics() }
        return try materialize(nodes, scope: PlanCacheScope.current, reserving: true, memoryLimit: memoryLimit)
    }

    /// ``materialize(_:memoryLimit:)`` for an `async` caller, on the calling task's thread.
    @discardableResult
    package static func materialize(_ nodes: [Node], memoryLimit: Int?) async throws(BufferPoolError)
        -> PlanStatistics
    {
        if nodes.allSatisfy({ $0.value != nil }) { return PlanStatistics() }
        let result = KernelThreads.withoutDispatchFallback { () -> Result<PlanStatistics, BufferPoolError> in
            do throws(BufferPoolError) {
                return .success(
                    try materialize(nodes, scope: PlanCacheScope.current, reserving: true, memoryLimit: memoryLimit))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// Materializes `nodes` with the plans of `scope` (the process-wide plans when `nil`).
    private static func materialize(_ nodes: [Node], scope: PlanCacheScope?) -> PlanStatistics {
        do {
            return try materialize(nodes, scope: scope, reserving: false, memoryLimit: nil)
        } catch {
            kernelFailure("[materialize] \(error)")
        }
    }

    /// Materializes `nodes` with the plans of `scope`, the plan's peak reserved in the shared
    /// pool first when `reserving` (see ``materialize(_:memoryLimit:)``).
    private static func materialize(
        _ nodes: [Node], scope: PlanCacheScope?, reserving: Bool, memoryLimit: Int?
    ) throws(BufferPoolError) -> PlanStatistics {
        try materializeSnapshot(nodes, scope: scope, reserving: reserving, memoryLimit: memoryLimit).statistics
    }

    /// ``materialize(_:scope:reserving:memoryLimit:)``, also returning the snapshot and plan it ran.
    static func materializeSnapshot(
        _ nodes: [Node], scope: PlanCacheScope?, reserving: Bool, memoryLimit: Int?
    ) throws(BufferPoolError) -> (statistics: PlanStatistics, snapshot: GraphSnapshot, plan: ExecutionPlan) {
        // Computing anything while a graph is built makes that graph depend on the result.
        BuildReads.note()
        let (snapshot, plan, cacheHit) = planned(nodes, scope: scope)
        let keeping = heldIntermediates(plan, snapshot.nodes)
        let (values, statistics) = try execute(
            plan, leafValues: snapshot.leafValues, keeping: keeping, reserving: reserving, memoryLimit: memoryLimit,
            cacheHit: cacheHit)
        for (i, value) in values { snapshot.nodes[i].materialize(value) }
        return (statistics, snapshot, plan)
    }

    /// Runs `plan` on `leafValues` (its peak reserved in the shared pool first when
    /// `reserving`), records what the run did as ``lastStatistics``, and returns the values of
    /// its requested and kept entries.
    static func execute(
        _ plan: ExecutionPlan, leafValues: [(entry: Int, value: TensorValue)], keeping: [Bool]?, reserving: Bool,
        memoryLimit: Int?, cacheHit: Bool
    ) throws(BufferPoolError) -> (values: [(entry: Int, value: TensorValue)], statistics: PlanStatistics) {
        // With another run in flight, this one keeps its loops on its own thread: two jobs on
        // two cores beat two jobs each splitting every loop across both (same bits either way).
        let othersRunning = runsInFlight.wrappingAdd(1, ordering: .relaxed).oldValue
        defer { runsInFlight.wrappingSubtract(1, ordering: .relaxed) }
        func run() -> (values: [(entry: Int, value: TensorValue)], peakBytes: Int, inPlaceSteps: Int) {
            othersRunning > 0
                ? KernelThreads.withSerialLoops { plan.run(leafValues: leafValues, keeping: keeping) }
                : plan.run(leafValues: leafValues, keeping: keeping)
        }
        let (values, peak, inPlace) =
            reserving
            ? try BufferPool.shared.withReservation(of: plan.plannedPeakBytes, budget: memoryLimit, run) : run()
        var statistics = PlanStatistics()
        statistics.planCacheHit = cacheHit
        statistics.steps = plan.steps.count
        statistics.kernels = plan.kernelCount
        statistics.fusedGroups = plan.fusedGroups
        statistics.fusedNodes = plan.fusedNodes
        statistics.convEpilogues = plan.convEpilogues
        statistics.peakBytes = peak
        statistics.inPlaceSteps = inPlace
        state.withLock { $0.last = statistics }
        return (values, statistics)
    }

    /// The graph below `nodes` and its plan from `scope`'s cache (the process-wide one when
    /// `nil`), compiled and kept there when new; `cacheHit` says whether it was found.
    static func planned(_ nodes: [Node], scope: PlanCacheScope?) -> (
        snapshot: GraphSnapshot, plan: ExecutionPlan, cacheHit: Bool
    ) {
        // Collecting (which marks nodes with the epoch) and looking the plan up happen under
        // the lock; compiling a new plan and running it do not, so the lock is only ever held
        // for one pass over the pending graph and requests from several threads compute at
        // the same time.
        let (snapshot, cached) = state.withLock { state in
            state.epoch += 1
            if let scope { return scope.cache.lookUp(nodes, epoch: state.epoch, sizeHint: &state.snapshotSize) }
            return state.cache.lookUp(nodes, epoch: state.epoch, sizeHint: &state.snapshotSize)
        }
        if let cached { return (snapshot, cached, true) }
        let compiled = ExecutionPlan(entries: snapshot.entries(), outputs: snapshot.outputs)
        let plan = state.withLock { state in
            if let scope { return scope.cache.insert(compiled, for: snapshot.key) }
            return state.cache.insert(compiled, for: snapshot.key)
        }
        return (snapshot, plan, false)
    }

    /// Materializes `nodes` for an `async` caller, on the calling task's thread, and returns
    /// what the run did.
    ///
    /// Running here costs no thread hop: the run is bounded CPU work that never waits for
    /// another task (the executor's lock is held only while the pending graph is collected and
    /// its plan looked up, never while compiling or computing). Large loops split across the
    /// kernel workers with this thread taking part, as in the blocking form; a loop that finds
    /// the workers busy with another thread's loop stays on this thread instead of waking
    /// Dispatch workers (``KernelThreads/withoutDispatchFallback(_:)``).
    @discardableResult
    package static func materialize(_ nodes: [Node]) async -> PlanStatistics {
        if nodes.allSatisfy({ $0.value != nil }) { return PlanStatistics() }
        return KernelThreads.withoutDispatchFallback { materialize(nodes, scope: PlanCacheScope.current) }
    }

    /// The statistics of the most recent materialization that ran a plan.
    package static var lastStatistics: PlanStatistics { state.withLock { $0.last } }

    /// The number of plans in the cache (the scope's, inside ``withPlanCache(_:)-swift.type.method``).
    package static var cachedPlanCount: Int {
        let scope = PlanCacheScope.current
        return state.withLock { scope?.cache.plans.count ?? $0.cache.plans.count }
    }

    /// The plan `nodes` would run, compiled afresh (not cached) and described, without running
    /// it: for structural tests of the planner.
    package static func describePlan(_ nodes: [Node]) -> PlanDescription {
        let snapshot = state.withLock { state in
            state.epoch += 1
            var codes: [GraphOp: Int] = [:]
            return GraphSnapshot(requested: nodes, epoch: state.epoch, codes: &codes, sizeHint: state.snapshotSize)
        }
        return ExecutionPlan(entries: snapshot.entries(), outputs: snapshot.outputs).planDescription
    }
}
