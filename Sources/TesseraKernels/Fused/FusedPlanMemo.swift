import Synchronization

/// The last plan of one fused program, kept for the next run with the same layouts.
///
/// Planning a run (collapsing dimensions, choosing how each input is read, assigning scratch
/// slots) costs about as much as running a small program. A caller that runs one program
/// again and again — a step of a cached graph plan — keeps a memo beside it; a run whose
/// iteration shape, input types, layouts and output types match the memo's reuses its plan.
/// Safe to share: the memo is behind a lock.
package final class FusedPlanMemo: Sendable {
    private struct Entry {
        var signature: [Int]
        var plan: FusedPlan
    }

    private let last = Mutex<Entry?>(nil)

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
        if let hit = last.withLock({ $0?.signature == signature ? $0?.plan : nil }) { return hit }
        let plan = make()
        last.withLock { $0 = Entry(signature: signature, plan: plan) }
        return plan
    }
}
