import TesseraKernels

extension ExecutionPlan {
    /// The most bytes the plan's results hold at once while it runs, in the pool's size classes:
    /// the same count as ``PlanStatistics/peakBytes`` (every step's result that is not a view,
    /// freed after its last reader), before the run, and with no fused step writing over a dying
    /// input, so never less than the run's own peak.
    ///
    /// Not counted: the leaf values (they exist already) and the kernels' scratch space (taken
    /// from the pool when it has room, from the system allocator when not).
    ///
    /// Counted once, when the plan is compiled (``plannedPeakBytes``); every run reserves it.
    static func peakBytes(entries: [GraphSnapshot.Entry], steps: [Step], releases: [[Int]]) -> Int {
        var live = 0
        var peak = 0
        var allocated = [Int](repeating: 0, count: entries.count)
        for (stepIndex, step) in steps.enumerated() {
            let entry = entries[step.entry]
            if !entry.op.isView {
                let bytes = entry.shape.reduce(1, *) * entry.type.byteCount
                if bytes > 0 {
                    allocated[step.entry] = BufferPool.sizeClass(for: bytes)
                    live += allocated[step.entry]
                    peak = max(peak, live)
                }
            }
            for released in releases[stepIndex] { live -= allocated[released] }
        }
        return peak
    }
}
