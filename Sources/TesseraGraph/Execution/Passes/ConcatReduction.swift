/// Reduces the parts of a concatenation where they lie instead of copying them together.
///
/// A reduction over trailing axes whose input is a concatenation along axis 0, seen through
/// reshapes, where the concatenation and those reshapes have no other reader and are not
/// requested, and every part is a whole number of the reduction's rows: the reduction becomes
/// one ``ExecutionPlan/Step/reduceConcat(entry:parts:)`` step over the parts. Runs after
/// ``ReductionStreaming`` (a streamed reduction reads a program, not a concatenation). Writes
/// `concatParts` and marks the concatenation and the reshapes `absorbed`.
enum ConcatReduction {
    static func run(_ state: inout PlanningState) {
        let entries = state.entries
        for i in entries.indices where state.isLive(i) && state.reduceProducer[i] == nil && !state.absorbed.contains(i)
        {
            guard case .reduce(_, let axes) = entries[i].op else { continue }
            let input = state.inputs[i][0]
            let rank = entries[input].shape.count
            guard let first = axes.first, axes == Array(first..<rank) else { continue }
            let rowSize = entries[input].shape[first...].reduce(1, *)
            var source = input
            var chain: [Int] = []
            while case .reshape = entries[source].op, state.consumers[source].count == 1,
                !state.requested.contains(source)
            {
                chain.append(source)
                source = state.inputs[source][0]
            }
            guard case .concat(let axis) = entries[source].op, axis == 0, state.consumers[source].count == 1,
                !state.requested.contains(source), rowSize > 0
            else { continue }
            let parts = state.inputs[source]
            guard parts.allSatisfy({ entries[$0].shape.reduce(1, *) % rowSize == 0 }) else { continue }
            state.concatParts[i] = parts
            state.absorbed.insert(source)
            for view in chain { state.absorbed.insert(view) }
        }
    }
}
