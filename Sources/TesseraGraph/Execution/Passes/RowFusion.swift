import TesseraKernels

/// Computes a fused program and the per-row reductions it reads in one pass over its rows.
///
/// A fusion root of rank ≥ 2 (shape `S`) whose program reads reductions over every axis after a
/// row axis `r` of a tensor of shape `S`, every axis before `r` of size 1 (so a `[1, 1500, 384]`
/// layer norm over its last axis has 1500 rows of 384) — a layer norm's `mean(x)` and
/// `mean((x - mean(x))²)`, or a softmax written out by hand — becomes one
/// ``ExecutionPlan/Step/rowFused(entry:_:)`` step when nothing but the group reads those
/// reductions: a chunk of rows at a time, each reduction (with the program streamed into it,
/// when ``ReductionStreaming`` gave it one) writes its per-row results to a small buffer, then
/// the root's program runs over the same rows while they are still in the core's cache. One
/// parallel loop replaces one per reduction, and the input is read from cache, not memory,
/// after the first pass over a chunk.
///
/// A member whose producer computes `(x - c)²` of a root-shaped leaf `x` and an earlier member
/// `c` (the variance's squared deviations) is marked ``ExecutionPlan/RowGroup/Member/centeredSquares``:
/// when every member is a `Float` sum or mean of contiguous rows, plain or of such squares, the
/// step computes all of them one row at a time with ``RowMoments`` (no program, no scratch),
/// each row read from L1 after its first pass.
///
/// Runs after ``ReductionStreaming`` (a member reduction keeps the producer streamed into it).
/// Writes `rowGroups` and marks the members and their producers `absorbed`.
enum RowFusion {
    static func run(_ state: inout PlanningState) {
        let entries = state.entries
        // Which programs read each entry as a leaf (a member must be read by its group alone).
        var programReaders = [[Int]](repeating: [], count: entries.count)
        for (root, group) in state.groups {
            for leaf in Set(group.leaves) { programReaders[leaf].append(root) }
        }
        // Consumers first: a group claims its members before a program inside it is looked at.
        for root in state.groups.keys.sorted(by: >) where !state.absorbed.contains(root) {
            let shape = entries[root].shape
            guard shape.count >= 2, let found = members(of: root, state, programReaders: programReaders),
                shape[found.rowAxis] > 0, shape[(found.rowAxis + 1)...].reduce(1, *) >= 2
            else { continue }
            let (rowAxis, members) = found
            state.rowGroups[root] = ExecutionPlan.RowGroup(
                rowAxis: rowAxis,
                members: members.map { m in
                    guard case .reduce(let op, let axes) = entries[m].op else {
                        kernelFailure("[row fusion] \(entries[m].op) is not a reduction")
                    }
                    let producer = state.reduceProducer[m].map { p in
                        ExecutionPlan.RowGroup.Program(
                            entry: p, program: state.groups[p]!.program, leaves: state.groups[p]!.leaves)
                    }
                    return ExecutionPlan.RowGroup.Member(
                        entry: m, op: op, axes: axes, input: state.inputs[m][0], producer: producer,
                        centeredSquares: state.reduceProducer[m].flatMap {
                            centeredSquares(of: m, computedBy: $0, members: members, shape: shape, state)
                        })
                },
                root: .init(entry: root, program: state.groups[root]!.program, leaves: state.groups[root]!.leaves))
            for m in members {
                state.absorbed.insert(m)
                if let p = state.reduceProducer.removeValue(forKey: m) { state.absorbed.insert(p) }
            }
        }
    }

    /// `x` and `c` when `producer`'s program computes `(x - c) * (x - c)` (or `square(x - c)`)
    /// in `Float` of a `Float` leaf `x` of the root's shape and a member `c` computed before
    /// `member` (a variance's squared
    /// deviations from the mean): the step then sums the squares a row at a time
    /// (``RowMoments``) instead of running the program into scratch memory.
    private static func centeredSquares(
        of member: Int, computedBy producer: Int, members: [Int], shape: [Int], _ state: PlanningState
    ) -> ExecutionPlan.RowGroup.CenteredSquares? {
        guard let group = state.groups[producer], group.program.computeType == .float32,
            group.program.outputs.count == 1
        else { return nil }
        let code = group.program.instructions
        let deviation: Int
        switch code[group.program.outputs[0]] {
        case .binary(.mul, let a, let b) where a == b: deviation = a
        case .unary(.square, let a): deviation = a
        default: return nil
        }
        guard case .binary(.sub, let xValue, let centerValue) = code[deviation],
            case .input(let xInput) = code[xValue], case .input(let centerInput) = code[centerValue]
        else { return nil }
        let x = group.leaves[xInput]
        let center = group.leaves[centerInput]
        guard members.contains(center), center < member,
            state.entries[x].shape == shape, state.entries[x].type == .float32,
            state.entries[center].type == .float32
        else { return nil }
        return .init(input: x, center: center)
    }

    /// The row axis and the reductions `root`'s group computes per chunk of rows, in topological
    /// order; `nil` when there is none. Every member reduces the axes after the same row axis.
    private static func members(of root: Int, _ state: PlanningState, programReaders: [[Int]]) -> (
        rowAxis: Int, members: [Int]
    )? {
        let entries = state.entries
        let shape = entries[root].shape
        // The row axis of a member reduction: the axis before the first reduced one, when the
        // reduced axes run from there to the last and every axis before the row axis has size 1.
        func memberRowAxis(_ p: Int) -> Int? {
            guard state.isLive(p), case .reduce(let op, let axes) = entries[p].op, op != .argmax, op != .argmin,
                let first = axes.first, first >= 1, axes == Array(first..<shape.count),
                shape[..<(first - 1)].allSatisfy({ $0 == 1 }), entries[state.inputs[p][0]].shape == shape
            else { return nil }
            return first - 1
        }
        var rowAxis: Int?
        // The candidates: the root's leaves that qualify, then theirs, and so on.
        var candidates = Set<Int>()
        var worklist = state.groups[root]!.leaves
        while let p = worklist.popLast() {
            guard !candidates.contains(p), state.isLive(p), !state.requested.contains(p), !state.absorbed.contains(p)
            else { continue }
            guard let axis = memberRowAxis(p), axis == rowAxis ?? axis else { continue }
            rowAxis = axis
            candidates.insert(p)
            if let q = state.reduceProducer[p] { worklist += state.groups[q]!.leaves }
        }
        // Drop every candidate that something outside the group reads, until none does.
        var changed = true
        while changed {
            changed = false
            // The programs the group runs: the root's and the producers streamed into members.
            var programs: Set<Int> = [root]
            for c in candidates { if let q = state.reduceProducer[c] { programs.insert(q) } }
            for c in candidates {
                let readByPrograms = programReaders[c].allSatisfy(programs.contains)
                // Every entry reading `c` must be inside one of those programs.
                let readByEntries = state.consumers[c].allSatisfy(state.fusible)
                if !readByPrograms || !readByEntries {
                    candidates.remove(c)
                    changed = true
                }
            }
        }
        guard let rowAxis, !candidates.isEmpty else { return nil }
        return (rowAxis, candidates.sorted())
    }
}
