import TesseraKernels

/// Groups chains of element-wise entries into fused programs, one per fusion root.
///
/// A *fusion root* is a live element-wise entry (or broadcast) whose value someone outside an
/// element-wise chain needs: the caller, or a reader that is not element-wise. Each root's
/// program absorbs the element-wise entries below it that are not roots themselves, and reads
/// everything else as leaves. A program computes in one type (its *domain*: float32, int32, …);
/// when a chain mixes domains, the first entry met of another domain becomes a root of its own
/// and the grouping starts over, until no program has a conflict (a fixed point: roots are only
/// ever added). Writes `isRoot` and `groups`.
enum ElementwiseFusion {
    static func run(_ state: inout PlanningState) {
        let n = state.entries.count
        for i in 0..<n where state.isLive(i) && state.fusible(i) {
            state.isRoot[i] = state.requested.contains(i) || state.consumers[i].contains { !state.fusible($0) }
        }
        let domains = (0..<n).map { i in
            state.isLive(i) && state.fusible(i) ? domain(of: i, state) : nil
        }
        var stable = false
        while !stable {
            stable = true
            state.groups = [:]
            for root in 0..<n where state.isRoot[root] {
                switch buildProgram(root: root, state, domains: domains) {
                case .program(let group): state.groups[root] = group
                case .conflict(let node):
                    state.isRoot[node] = true
                    stable = false
                }
                if !stable { break }
            }
        }
    }

    /// The compute type an element-wise entry needs, or `nil` when it works in any (logic on
    /// bools, broadcasts of bools).
    static func domain(of i: Int, _ state: PlanningState) -> FusedProgram.ComputeType? {
        let entries = state.entries
        let operandType = entries[state.inputs[i].last!].type
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
        case program(PlanningState.FusedGroup)
        /// An entry of another domain than the program's.
        case conflict(Int)
    }

    /// The fused program computing `root` from the element-wise entries it can absorb.
    private static func buildProgram(
        root: Int, _ state: PlanningState, domains: [FusedProgram.ComputeType?]
    ) -> ProgramResult {
        let entries = state.entries
        var domain = domains[root]
        var instructions: [FusedProgram.Instruction] = []
        var register: [Int: Int] = [:]
        var leafIndex: [Int: Int] = [:]
        var leaves: [Int] = []
        var size = 0
        // Iterative post-order over the absorbed entries.
        var stack: [(entry: Int, expanded: Bool)] = [(root, false)]
        func isInternal(_ j: Int) -> Bool { j == root || (state.fusible(j) && !state.isRoot[j]) }
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
            let operands = state.inputs[entry]
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
        return .program(PlanningState.FusedGroup(program: program, leaves: leaves, size: size))
    }
}
