/// Compiled plans by graph structure, with the op numbering their keys are written in.
///
/// The executor keeps one process-wide cache; ``GraphExecutor/withPlanCache(_:)-swift.type.method``
/// runs code against a fresh one of its own. A cache is only touched under the executor's lock.
struct PlanCache {
    var plans: [GraphSnapshot.Key: ExecutionPlan] = [:]
    /// Numbers for the ops plan keys do not spell out; emptied with `plans`.
    var opCodes: [GraphOp: Int] = [:]

    /// Collects the graph below `nodes` (marking them with `epoch`) and finds its plan: the
    /// snapshot and the cached plan, or `nil` when the structure is new (the caller compiles
    /// it outside the executor's lock and hands it to ``insert(_:for:)``). Past
    /// ``GraphExecutor/planCacheCapacity`` plans (or as many op numbers as
    /// `GraphExecutor.opCodeCapacity`), the cache starts over first.
    mutating func lookUp(
        _ nodes: [Node], epoch: UInt64, sizeHint: inout (nodes: Int, words: Int)
    ) -> (GraphSnapshot, ExecutionPlan?) {
        if plans.count >= GraphExecutor.planCacheCapacity || opCodes.count >= GraphExecutor.opCodeCapacity {
            plans.removeAll(keepingCapacity: true)
            opCodes.removeAll(keepingCapacity: true)
        }
        let snapshot = GraphSnapshot(requested: nodes, epoch: epoch, codes: &opCodes, sizeHint: sizeHint)
        sizeHint = (Swift.max(16, snapshot.nodes.count), Swift.max(128, snapshot.key.words.count))
        return (snapshot, plans[snapshot.key])
    }

    /// Keeps `plan`, compiled for `key`, and returns the plan to run: the one another thread
    /// kept for the same key meanwhile, if any (so concurrent runs share one plan's memos).
    mutating func insert(_ plan: ExecutionPlan, for key: GraphSnapshot.Key) -> ExecutionPlan {
        if let kept = plans[key] { return kept }
        plans[key] = plan
        return plan
    }
}

/// A plan cache of its own for the code inside one ``GraphExecutor/withPlanCache(_:)-swift.type.method``
/// call: a task-local value, so concurrent tests do not see each other's plans.
final class PlanCacheScope: @unchecked Sendable {
    /// Touched only under the executor's lock.
    var cache = PlanCache()

    /// The innermost scope of the current task, or `nil` outside every scope.
    @TaskLocal static var current: PlanCacheScope?
}

// The synchronous and asynchronous `withPlanCache` resolve by context, as `TaskLocal.withValue` does.
// swift-format-ignore: AmbiguousTrailingClosureOverload
extension GraphExecutor {
    /// Runs `body` with a plan cache of its own, empty at the start, that no other task shares:
    /// materializations inside see only the plans compiled inside. For tests of plan reuse,
    /// which the process-wide cache (shared with every test running in parallel, and emptied
    /// when full) cannot make deterministic. Nested scopes each get their own cache.
    ///
    /// ```swift
    /// GraphExecutor.withPlanCache {
    ///     GraphExecutor.materialize([build(x)])                  // compiles
    ///     GraphExecutor.materialize([build(y)]).planCacheHit     // true
    /// }
    /// ```
    package static func withPlanCache<Result>(_ body: () throws -> Result) rethrows -> Result {
        try PlanCacheScope.$current.withValue(PlanCacheScope(), operation: body)
    }

    /// Runs the asynchronous `body` with a plan cache of its own (see the synchronous form).
    package static func withPlanCache<Result>(
        _ body: () async throws -> Result
    ) async rethrows -> Result {
        try await PlanCacheScope.$current.withValue(PlanCacheScope(), operation: body)
    }
}
