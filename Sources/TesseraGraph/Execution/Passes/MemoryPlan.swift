/// Decides when each intermediate's buffer goes back to the pool.
///
/// An entry's value is *temporary* when it is neither a leaf (a constant) nor requested; a
/// temporary dies at the last step that reads it (``PlanningState/reads(_:)``, the one
/// read-set of a step), and its buffer returns to the pool right after that step, for the next
/// step of similar size to reuse. Writes `lastUse`, `isTemporary`, `releases` (each step's
/// dying intermediates, each once) and `peakIntermediates` (the most intermediate buffers alive
/// at once in this schedule; views share their input's buffer and count for nothing).
enum MemoryPlan {
    static func run(_ state: inout PlanningState) {
        let entries = state.entries
        let reads = state.steps.map(state.reads)
        for (s, read) in reads.enumerated() {
            for r in read { state.lastUse[r] = s }
        }
        state.isTemporary = entries.map { $0.op != .constant }
        for output in state.outputs { state.isTemporary[state.canonical[output]] = false }
        var holdsBuffer = [Bool](repeating: false, count: entries.count)
        var live = 0
        var releases: [[Int]] = []
        releases.reserveCapacity(reads.count)
        for (s, read) in reads.enumerated() {
            let entry = state.steps[s].entry
            if state.isTemporary[entry] && !entries[entry].op.isView {
                holdsBuffer[entry] = true
                live += 1
                state.peakIntermediates = max(state.peakIntermediates, live)
            }
            var dying: [Int] = []
            for r in read where state.lastUse[r] == s && state.isTemporary[r] && !dying.contains(r) {
                dying.append(r)
                if holdsBuffer[r] { live -= 1 }
            }
            releases.append(dying)
        }
        state.releases = releases
    }
}
