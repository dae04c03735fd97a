import TesseraKernels

/// A compiled schedule for one graph structure: which entries alias which (common
/// subexpressions and identities), which element-wise chains run as one fused program, and the
/// order of the steps. Plans are cached by structure, so materializing the same computation on
/// new inputs of the same shapes skips all of this.
final class ExecutionPlan: @unchecked Sendable {
    /// One unit of work.
    enum Step {
        /// `entry`'s value is a new layout over its input's storage (or a compact copy).
        case view(entry: Int)
        /// A fused element-wise program writes `entry`; `leaves` are its inputs in order.
        case fused(entry: Int, program: FusedProgram, leaves: [Int])
        /// One kernel computes `entry` from its inputs.
        case kernel(entry: Int)
        /// A reduction over trailing axes of a fused program's result: the program runs a
        /// chunk of leading-axis rows into a cache-sized scratch block, which is reduced
        /// before the next chunk, so the program's result never goes to memory.
        case fusedReduce(entry: Int, program: FusedProgram, leaves: [Int], producer: Int)
        /// A softmax (or log-softmax) along the last axis of a fused program's result, run the
        /// same way: chunks of leading-axis rows go through the program into a scratch block
        /// and straight on through the softmax kernel.
        case fusedSoftmax(entry: Int, program: FusedProgram, leaves: [Int], producer: Int)
        /// A reduction over trailing axes of a reshaped concatenation along axis 0: each part
        /// holds whole rows of the reduction, so each part is reduced where it lies and the
        /// concatenation is never copied.
        case reduceConcat(entry: Int, parts: [Int])
        /// A convolution whose only reader is a fused program computing
        /// `min(max(conv + residual, lower), upper)` (the residual, and either bound, may be
        /// absent): the convolution kernel writes `entry`, the program's result, adding the
        /// residual and applying the clamp as it finishes each part of the output. `residual` is
        /// an entry of the convolution's shape; `lower` and `upper` are single-element float32
        /// entries, read at run time (plans are shared by graphs whose constants differ).
        case convEpilogue(entry: Int, conv: Int, residual: Int?, lower: Int?, upper: Int?)

        var entry: Int {
            switch self {
            case .view(let entry), .fused(let entry, _, _), .kernel(let entry), .fusedReduce(let entry, _, _, _),
                .fusedSoftmax(let entry, _, _, _), .reduceConcat(let entry, _), .convEpilogue(let entry, _, _, _, _):
                return entry
            }
        }
    }

    let entries: [GraphSnapshot.Entry]
    let outputs: [Int]
    /// For every entry, the entry whose value it shares (itself unless merged away).
    let canonical: [Int]
    let steps: [Step]
    /// For every entry, the index of the last step that reads it (`-1` when none does).
    let lastUse: [Int]
    /// For every step, the memo that keeps a fused program's run plan between runs.
    let memos: [FusedPlanMemo?]
    /// For every entry, whether its value is an intermediate this plan may free or overwrite
    /// (not a leaf, not requested).
    let isTemporary: [Bool]
    /// Counts for ``PlanStatistics``.
    let fusedGroups: Int
    let fusedNodes: Int
    let convEpilogues: Int

    init(entries: [GraphSnapshot.Entry], outputs: [Int]) {
        let n = entries.count

        // 1. Common subexpressions and identities: an entry equal to an earlier one (same op,
        //    type, shape and canonical inputs) or an identity op reads the earlier value.
        var canonical = Array(0..<n)
        var seen: [GraphSnapshot.Entry: Int] = [:]
        for i in 0..<n {
            var entry = entries[i]
            entry.inputs = entry.inputs.map { canonical[$0] }
            if entry.op == .constant { continue }
            if ExecutionPlan.isIdentity(entry, input: entry.inputs.first.map { entries[$0] }) {
                canonical[i] = entry.inputs[0]
                continue
            }
            if let earlier = seen[entry] {
                canonical[i] = earlier
            } else {
                seen[entry] = i
            }
        }
        let canonicalEntries = canonical
        func inputs(_ i: Int) -> [Int] { entries[i].inputs.map { canonicalEntries[$0] } }

        // 2. Who reads whom, among canonical entries.
        var consumers = [[Int]](repeating: [], count: n)
        for i in 0..<n where canonical[i] == i {
            for input in Set(inputs(i)) { consumers[input].append(i) }
        }
        let requested = Set(outputs.map { canonical[$0] })
        /// Element-wise ops and broadcasts (a broadcast is the identity inside a program).
        func fusible(_ i: Int) -> Bool {
            if case .broadcast = entries[i].op { return true }
            return entries[i].op.isElementwise
        }

        // 3. Fusion roots: element-wise entries someone outside an element-wise chain needs.
        var isRoot = [Bool](repeating: false, count: n)
        for i in 0..<n where canonical[i] == i && fusible(i) {
            isRoot[i] = requested.contains(i) || consumers[i].contains { !fusible($0) }
        }
        let domains = (0..<n).map { i in
            canonical[i] == i && fusible(i) ? ExecutionPlan.domain(of: i, entries, inputs) : nil
        }
        // A node pulled into a group of another compute domain becomes a root of its own.
        var groups: [Int: (program: FusedProgram, leaves: [Int], size: Int)] = [:]
        var stable = false
        while !stable {
            stable = true
            groups = [:]
            for root in 0..<n where isRoot[root] {
                switch ExecutionPlan.buildProgram(
                    root: root, entries: entries, inputs: inputs, fusible: fusible, isRoot: isRoot, domains: domains)
                {
                case .program(let program, let leaves, let size): groups[root] = (program, leaves, size)
                case .conflict(let node):
                    isRoot[node] = true
                    stable = false
                }
                if !stable { break }
            }
        }

        // 4. Steps in topological order: fusion roots, views and kernels; fused-away
        //    entries produce no step.
        // A fusion root read only by a reduction over trailing axes, or by a softmax along
        // the last axis, runs inside it.
        var absorbed = Set<Int>()
        var reduceProducer: [Int: Int] = [:]
        var softmaxProducer: [Int: Int] = [:]
        for i in 0..<n where canonical[i] == i {
            let axes: [Int]
            switch entries[i].op {
            case .reduce(let op, let reduced) where op != .argmax && op != .argmin: axes = reduced
            case .softmax(let axis), .logSoftmax(let axis): axes = [axis]
            default: continue
            }
            let p = inputs(i)[0]
            let rank = entries[p].shape.count
            guard groups[p] != nil, !requested.contains(p), consumers[p] == [i], let first = axes.first, first >= 1,
                axes == Array(first..<rank)
            else { continue }
            absorbed.insert(p)
            if case .reduce = entries[i].op { reduceProducer[i] = p } else { softmaxProducer[i] = p }
        }

        // A reduction over trailing axes whose input is a concatenation along axis 0, seen
        // through reshapes that nothing else reads: when every part is a whole number of the
        // reduction's rows, the parts are reduced in place of the concatenation.
        var concatParts: [Int: [Int]] = [:]
        for i in 0..<n where canonical[i] == i && reduceProducer[i] == nil {
            guard case .reduce(_, let axes) = entries[i].op else { continue }
            let input = inputs(i)[0]
            let rank = entries[input].shape.count
            guard let first = axes.first, axes == Array(first..<rank) else { continue }
            let rowSize = entries[input].shape[first...].reduce(1, *)
            var source = input
            var chain: [Int] = []
            while case .reshape = entries[source].op, consumers[source].count == 1, !requested.contains(source) {
                chain.append(source)
                source = inputs(source)[0]
            }
            guard case .concat(let axis) = entries[source].op, axis == 0, consumers[source].count == 1,
                !requested.contains(source), rowSize > 0
            else { continue }
            let parts = inputs(source)
            guard parts.allSatisfy({ entries[$0].shape.reduce(1, *) % rowSize == 0 }) else { continue }
            concatParts[i] = parts
            absorbed.insert(source)
            for view in chain { absorbed.insert(view) }
        }

        // A fusion root that only adds to and/or clamps a convolution read by nothing else (no
        // other program, no kernel, not the caller) becomes the convolution's epilogue.
        var convEpilogues: [Int: (conv: Int, residual: Int?, lower: Int?, upper: Int?)] = [:]
        var programsReading = [Int](repeating: 0, count: n)
        for group in groups.values { for leaf in group.leaves { programsReading[leaf] += 1 } }
        for (root, group) in groups where !absorbed.contains(root) {
            guard let pattern = ExecutionPlan.epiloguePattern(group.program) else { continue }
            let lower = pattern.lower.map { group.leaves[$0] }
            let upper = pattern.upper.map { group.leaves[$0] }
            for operands in pattern.operands {
                let conv = group.leaves[operands.conv]
                let residual = operands.residual.map { group.leaves[$0] }
                guard case .conv2d = entries[conv].op, programsReading[conv] == 1,
                    consumers[conv].allSatisfy(fusible), !requested.contains(conv), entries[conv].type == .float32,
                    entries[root].type == .float32, entries[conv].shape == entries[root].shape
                else { continue }
                let bounds = [lower, upper].compactMap { $0 }
                guard bounds.allSatisfy({ entries[$0].type == .float32 && entries[$0].shape.reduce(1, *) == 1 }),
                    !bounds.contains(conv)
                else { continue }
                if let residual {
                    guard residual != conv, entries[residual].type == .float32,
                        entries[residual].shape == entries[conv].shape
                    else { continue }
                }
                convEpilogues[root] = (conv, residual, lower, upper)
                absorbed.insert(conv)
                break
            }
        }

        var steps: [Step] = []
        var lastUse = [Int](repeating: -1, count: n)
        for i in 0..<n where canonical[i] == i && entries[i].op != .constant {
            let step: Step
            let reads: [Int]
            if let epilogue = convEpilogues[i] {
                step = .convEpilogue(
                    entry: i, conv: epilogue.conv, residual: epilogue.residual, lower: epilogue.lower,
                    upper: epilogue.upper)
                reads = inputs(epilogue.conv) + [epilogue.residual, epilogue.lower, epilogue.upper].compactMap { $0 }
            } else if let p = reduceProducer[i], let group = groups[p] {
                step = .fusedReduce(entry: i, program: group.program, leaves: group.leaves, producer: p)
                reads = group.leaves
            } else if let parts = concatParts[i] {
                step = .reduceConcat(entry: i, parts: parts)
                reads = parts
            } else if absorbed.contains(i) && !fusible(i) {
                continue
            } else if let p = softmaxProducer[i], let group = groups[p] {
                step = .fusedSoftmax(entry: i, program: group.program, leaves: group.leaves, producer: p)
                reads = group.leaves
            } else if fusible(i) {
                guard let group = groups[i], !absorbed.contains(i) else { continue }
                step = .fused(entry: i, program: group.program, leaves: group.leaves)
                reads = group.leaves
            } else if entries[i].op.isView {
                step = .view(entry: i)
                reads = inputs(i)
            } else {
                step = .kernel(entry: i)
                reads = inputs(i)
            }
            for r in reads { lastUse[r] = steps.count }
            steps.append(step)
        }
        self.entries = entries
        self.outputs = outputs
        self.canonical = canonical
        self.steps = steps
        memos = steps.map { if case .fused = $0 { FusedPlanMemo() } else { nil } }
        self.lastUse = lastUse
        var isTemporary = entries.map { $0.op != .constant }
        for output in outputs { isTemporary[canonical[output]] = false }
        self.isTemporary = isTemporary
        fusedGroups = groups.count - convEpilogues.count
        fusedNodes = groups.filter { convEpilogues[$0.key] == nil }.values.reduce(0) { $0 + $1.size }
        self.convEpilogues = convEpilogues.count
    }

    /// The leaf positions when `program` computes exactly `min(max(t, lower), upper)` in float32,
    /// with `t` a leaf or the sum of two leaves and either bound absent (but something to do):
    /// the bounds, and the ways to read `t` as a convolution plus a residual (a sum has two; the
    /// plan takes the first whose convolution qualifies). The bounds must be the right operands
    /// (as MIL's `relu`, `relu6` and `clip` lower); addition commutes, so either operand of the
    /// sum may be the convolution.
    static func epiloguePattern(
        _ program: FusedProgram
    ) -> (operands: [(conv: Int, residual: Int?)], lower: Int?, upper: Int?)? {
        guard program.computeType == .float32, program.outputs.count == 1 else { return nil }
        let instructions = program.instructions
        func leaf(_ r: Int) -> Int? {
            if case .input(let k) = instructions[r] { return k }
            return nil
        }
        var r = program.outputs[0]
        var upper: Int?
        var lower: Int?
        if case .binary(.min, let a, let b) = instructions[r], let k = leaf(b) {
            upper = k
            r = a
        }
        if case .binary(.max, let a, let b) = instructions[r], let k = leaf(b) {
            lower = k
            r = a
        }
        if let input = leaf(r) {
            guard lower != nil || upper != nil else { return nil }
            return ([(input, nil)], lower, upper)
        }
        if case .binary(.add, let a, let b) = instructions[r], let ka = leaf(a), let kb = leaf(b), ka != kb {
            return ([(ka, kb), (kb, ka)], lower, upper)
        }
        return nil
    }

    /// Ops that return their input unchanged.
    private static func isIdentity(_ entry: GraphSnapshot.Entry, input: GraphSnapshot.Entry?) -> Bool {
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

    /// The compute type an element-wise entry needs, or `nil` when it works in any (logic on
    /// bools, broadcasts of bools).
    private static func domain(
        of i: Int, _ entries: [GraphSnapshot.Entry], _ inputs: (Int) -> [Int]
    ) -> FusedProgram.ComputeType? {
        let operandType = entries[inputs(i).last!].type
        switch entries[i].op {
        case .binary(let op):
            if operandType == .bool { return nil }
            return ElementwiseKernels.computeType(for: op, operandType)
        case .select, .broadcast:
            return operandType == .bool ? nil : FusedProgram.ComputeType(for: operandType)
        case .cast:
            // A cast to a float type computes in that type: loads convert integers exactly as a
            // cast kernel would, so `uint8 image → float → normalize` stays one program.
            if entries[i].type.isFloatingPoint { return FusedProgram.ComputeType(for: entries[i].type) }
            return operandType == .bool ? nil : FusedProgram.ComputeType(for: operandType)
        default:
            return FusedProgram.ComputeType(for: operandType)
        }
    }

    private enum ProgramResult {
        case program(FusedProgram, leaves: [Int], size: Int)
        case conflict(Int)
    }

    /// The fused program computing `root` from the element-wise entries it can absorb.
    private static func buildProgram(
        root: Int, entries: [GraphSnapshot.Entry], inputs: (Int) -> [Int], fusible: (Int) -> Bool,
        isRoot: [Bool], domains: [FusedProgram.ComputeType?]
    ) -> ProgramResult {
        var domain = domains[root]
        var instructions: [FusedProgram.Instruction] = []
        var register: [Int: Int] = [:]
        var leafIndex: [Int: Int] = [:]
        var leaves: [Int] = []
        var size = 0
        // Iterative post-order over the absorbed entries.
        var stack: [(entry: Int, expanded: Bool)] = [(root, false)]
        func isInternal(_ j: Int) -> Bool { j == root || (fusible(j) && !isRoot[j]) }
        while let (entry, expanded) = stack.popLast() {
            if register[entry] != nil { continue }
            if !isInternal(entry) {
                let k =
                    leafIndex[entry]
                    ?? {
                        leaves.append(entry)
                        leafIndex[entry] = leaves.count - 1
                        return leaves.count - 1
                    }()
                register[entry] = instructions.count
                instructions.append(.input(k))
                continue
            }
            if let d = domains[entry] {
                if domain == nil { domain = d }
                if d != domain { return .conflict(entry) }
            }
            let operands = inputs(entry)
            if !expanded {
                stack.append((entry, true))
                for operand in operands.reversed() where register[operand] == nil { stack.append((operand, false)) }
                continue
            }
            size += 1
            let r = operands.map { register[$0]! }
            switch entries[entry].op {
            case .unary(let op): instructions.append(.unary(op, r[0]))
            case .binary(let op): instructions.append(.binary(op, r[0], r[1]))
            case .select: instructions.append(.select(condition: r[0], r[1], r[2]))
            case .cast(let type): instructions.append(.cast(to: type, r[0]))
            case .broadcast:
                register[entry] = r[0]
                continue
            default: kernelFailure("[fusion] \(entries[entry].op) is not element-wise")
            }
            register[entry] = instructions.count - 1
        }
        var outputRegister = register[root]!
        if case .input = instructions[outputRegister] {
            // A bare broadcast of a leaf: copy it through the program.
            instructions.append(.cast(to: entries[root].type, outputRegister))
            outputRegister = instructions.count - 1
        }
        let program = FusedProgram(computeType: domain ?? .int32, instructions: instructions, outputs: [outputRegister])
        return .program(program, leaves: leaves, size: size)
    }
}
