/// Compiled plans by graph structure, with the op numbering their keys are written in.
///
/// The executor keeps one process-wide cache; ``GraphExecutor/withPlanCache(_:)-swift.type.method``
/// runs code against a fresh one of its own. A cache is only touched under the executor's lock.
struct PlanCache {
    var plans: [GraphSnapshot.Key: ExecutionPlan] = [:]
    /// Numbers for the ops plan keys do not spell out; emptied with `plans`.
    var opCodes: [GraphOp: Int] = [:]

    /// Collects the graph below `nodes` (marking them with `epoch`) and finds its plan, or
    /// compiles and keeps it: the snapshot, the plan, and whether it was cached. Past
    /// ``GraphExecutor/planCacheCapacity`` plans (or as many op numbers as
    /// `GraphExecutor.opCodeCapacity`), the cache starts over first.
    mutating func plan(
        for nodes: [Node], epoch: UInt64, sizeHint: inout (nodes: Int, words: Int)
    ) -> (GraphSnapshot, ExecutionPlan, Bool) {
        if plans.count >= GraphExecutor.planCacheCapacity || opCodes.count >= GraphExecutor.opCodeCapacity {
            plans.removeAll(keepingCapacity: true)
            opCodes.removeAll(keepingCapacity: true)
        }
        let snapshot = GraphSnapshot(requested: nodes, epoch: epoch, codes: &opCodes, sizeHint: sizeHint)
        sizeHint = (Swift.max(16, snapshot.nodes.count), Swift.max(128, snapshot.key.words.count))
        if let cached = plans[snapshot.key] { return (snapshot, cached, true) }
        let plan = ExecutionPlan(entries: snapshot.entries(), outputs: snapshot.outputs)
        plans[snapshot.key] = plan
        return (snapshot, plan, false)
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
