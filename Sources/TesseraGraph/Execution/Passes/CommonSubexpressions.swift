/// Merges entries that compute the same value, and drops ops that return their input.
///
/// Rewrites `canonical`: an entry equal to an earlier one (same op, type, shape and canonical
/// inputs) shares the earlier value, and an identity op (a reshape or broadcast to the same
/// shape, the identity permutation, a cast to the same type, a full slice) shares its input's.
/// Constants are never merged (two leaves with equal shapes hold different elements). Then
/// fills in every live entry's canonical `inputs`, its `consumers` and the `requested` set.
///
/// Value identities such as `x * 1` and `x + 0` are not this pass's: plans are shared by graphs
/// whose constants differ, so the tensor layer folds those when it builds the node.
enum CommonSubexpressionElimination {
    static func run(_ state: inout PlanningState) {
        let entries = state.entries
        var seen: [GraphSnapshot.Entry: Int] = [:]
        for i in entries.indices {
            var entry = entries[i]
            entry.inputs = entry.inputs.map { state.canonical[$0] }
            state.inputs[i] = entry.inputs
            if entry.op == .constant { continue }
            if isIdentity(entry, input: entry.inputs.first.map { entries[$0] }) {
                state.canonical[i] = entry.inputs[0]
                continue
            }
            if let earlier = seen[entry] {
                state.canonical[i] = earlier
            } else {
                seen[entry] = i
            }
        }
        for i in entries.indices where state.isLive(i) {
            for input in Set(state.inputs[i]) { state.consumers[input].append(i) }
        }
        state.requested = Set(state.outputs.map { state.canonical[$0] })
    }

    /// Whether `entry` returns `input` unchanged.
    static func isIdentity(_ entry: GraphSnapshot.Entry, input: GraphSnapshot.Entry?) -> Bool {
        guard let input else { return false }
        switch entry.op {
        case .reshape, .broadcast: return entry.shape == input.shape
        case .permute(let p): return p == Array(0..<p.count)
        case .cast(let type): return type == input.type
        case .slice(let starts, let steps, let counts):
            return counts == input.shape && starts.allSatisfy { $0 == 0 } && steps.allSatisfy { $0 == 1 }
        default: return false
        }
    }
}
