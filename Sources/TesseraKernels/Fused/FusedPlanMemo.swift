import Synchronization

/// The last two plans of one fused program, kept for the next runs with the same layouts.
///
/// Planning a run (collapsing dimensions, choosing how each input is read, assigning scratch
/// slots) costs about as much as running a small program. A caller that runs one program
/// again and again — a step of a cached graph plan — keeps a memo beside it; a run whose
/// iteration shape, input types, layouts and output types match one of the memo's reuses its
/// plan. Two, because a row-fused step runs its programs on chunks of rows of which the last
/// is usually shorter: with one plan kept, on two threads the short chunk and the full ones
/// took turns replanning. Safe to share: the memo is behind a lock.
package final class FusedPlanMemo: Sendable {
    private struct Entry {
        var signature: [Int]
        var plan: FusedPlan
    }

    /// The most recently made or used first.
    private let recent = Mutex<[Entry]>([])

    /// An empty memo.
    package init() {}

    /// The words a plan depends on besides the program: shape, each input's type and layout,
    /// the output types, and whether outputs overlap inputs.
    private static func signature(
        shape: [Int], inputs: [FusedInput], outputs: [FusedOutput], overlaps: Bool
    ) -> [Int] {
        var words: [Int] = []
        words.reserveCapacity(2 + shape.count + inputs.count * (3 + 2 * shape.count) + outputs.count)
        words.append(overlaps ? 1 : 0)
        words.append(shape.count)
        words.append(contentsOf: shape)
        for input in inputs {
            words.append(Int(input.type.rawValue))
            words.append(input.layout.offset)
            words.append(input.layout.strides.count)
            words.append(contentsOf: input.layout.strides)
        }
        for output in outputs { words.append(Int(output.type.rawValue)) }
        return words
    }

    func plan(
        shape: [Int], inputs: [FusedInput], outputs: [FusedOutput], overlaps: Bool, make: () -> FusedPlan
    ) -> FusedPlan {
        let signature = FusedPlanMemo.signature(shape: shape, inputs: inputs, outputs: outputs, overlaps: overlaps)
        let hit = recent.withLock { entries -> FusedPlan? in
            guard let index = entries.firstIndex(where: { $0.signature == signature }) else { return nil }
            if index > 0 { entries.swapAt(0, index) }
            return entries[0].plan
        }
        if let hit { return hit }
        let plan = make()
        recent.withLock { entries in
            entries.insert(Entry(signature: signature, plan: plan), at: 0)
            if entries.count > 2 { entries.removeLast() }
        }
        return plan
    }
}
