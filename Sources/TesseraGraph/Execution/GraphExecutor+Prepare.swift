import TesseraKernels

extension GraphExecutor {
    /// Readies everything a first materialization of `nodes` would otherwise do before its
    /// kernels run, without computing them: finds or compiles the plan (kept in the plan cache,
    /// so a later materialization of the same structure finds it) and has every kernel step that
    /// reads a constant prepare it through its op's rule (``OpRule/prepare(_:operands:shapes:)``; the
    /// packed weights of ``PreparedWeights``), the steps spread across the kernel workers.
    ///
    /// A model calls it at load on the graph of a prediction on its declared shapes, so its
    /// first prediction packs no weight. The nodes stay pending.
    ///
    /// ```swift
    /// GraphExecutor.prepare(outputs.map(\.node))
    /// ```
    ///
    /// - Returns: The number of kernel steps that read a constant.
    @discardableResult
    package static func prepare(_ nodes: [Node]) -> Int {
        if nodes.allSatisfy({ $0.value != nil }) { return 0 }
        let (snapshot, plan, _) = planned(nodes, scope: PlanCacheScope.current)
        let tasks = plan.preparationTasks(leafValues: snapshot.leafValues)
        // Preparing a weight costs tens of microseconds to milliseconds, about in proportion to
        // the size of the form it writes (``OpRule/preparationCost(_:operands:shapes:)``: a
        // Winograd filter is 4 times its weight): the tasks are dealt, largest first, to the
        // least loaded of four groups per core, so one large weight (a classifier's) does not
        // leave the other cores waiting.
        let groupCount = Swift.min(tasks.count, Swift.max(1, KernelThreads.coreBudget * 4))
        var groups = [[Int]](repeating: [], count: groupCount)
        var loads = [Int](repeating: 0, count: groupCount)
        let sizes = tasks.map { $0.op.rule.preparationCost($0.op, operands: $0.operands, shapes: $0.shapes) }
        for task in tasks.indices.sorted(by: { sizes[$0] > sizes[$1] }) {
            let lightest = loads.indices.min { loads[$0] < loads[$1] }!
            groups[lightest].append(task)
            loads[lightest] += sizes[task]
        }
        let counting = PreparedWeights.currentMissCounting
        parallelFor(count: groupCount, cost: ParallelCost(nanosecondsPerItem: 1_000_000)) { range in
            counting {
                for group in groups[range] {
                    for task in group.map({ tasks[$0] }) {
                        task.op.rule.prepare(task.op, operands: task.operands, shapes: task.shapes)
                    }
                }
            }
        }
        return tasks.count
    }
}
