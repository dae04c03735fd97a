import TesseraKernels

/// Lets a convolution or a matrix product finish the fused program that adds to or clamps its
/// result.
///
/// A fusion root whose program computes exactly `min(max(conv + residual, lower), upper)` in
/// float32 (the residual, and either bound, may be absent, but not all three) becomes one
/// ``ExecutionPlan/Step/convEpilogue(entry:_:)`` step when the convolution (or `matmul`) is
/// float32, has the root's shape, is read by that program alone (no other program, no kernel,
/// not the caller), the bounds are single-element float32 entries and the residual has the
/// product's shape — or, for a `matmul`, is a bias of one value per column (`[n]`: a linear
/// layer's bias, ``isColumnBias(_:of:)``): the kernel adds the residual and applies the clamp as
/// it finishes each part of its output. Writes `convEpilogues` and marks the product `absorbed`.
///
/// The match does not depend on operand order: `add`, `max` and `min` commute, so
/// `max(0, conv)` fuses like `max(conv, 0)` and `r + conv` like `conv + r`. The kernel computes
/// a bound on the right (`max(x, lower)`); `max` and `min` give their left operand on a tie, so
/// a bound on the left differs only when the convolution's value equals the bound — a zero of
/// the other sign — and the step then gives zero outputs the bound's bits (see
/// ``ExecutionPlan/ConvolutionEpilogue/lowerOnLeft``). Two cases keep other bits than the
/// element-wise ops would: both bounds zero with one on each side, and a NaN bound on the left
/// with a NaN convolution value (a NaN either way, with the bound's payload).
enum ConvolutionEpilogueFusion {
    /// One way to read a program as a convolution epilogue, in the program's leaf positions.
    struct Reading: Equatable {
        var conv: Int
        var residual: Int?
        /// For `(conv + columnBias) + residual`: the column bias (a `matmul` only).
        var columnBias: Int? = nil
        var lower: Int?
        var upper: Int?
        var lowerOnLeft = false
        var upperOnLeft = false
    }

    static func run(_ state: inout PlanningState) {
        let programsReading = programsReading(state)
        for root in state.groups.keys where !state.absorbed.contains(root) && state.rowGroups[root] == nil {
            guard let epilogue = epilogue(for: root, in: state, programsReading: programsReading) else { continue }
            state.convEpilogues[root] = epilogue
            state.absorbed.insert(epilogue.conv)
        }
    }

    /// How many fused programs read each entry as a leaf.
    static func programsReading(_ state: PlanningState) -> [Int] {
        var counts = [Int](repeating: 0, count: state.entries.count)
        for group in state.groups.values { for leaf in group.leaves { counts[leaf] += 1 } }
        return counts
    }

    /// The epilogue the program of fusion root `root` becomes when it finishes a convolution or
    /// matrix product that qualifies (see the type's comment), or `nil`. ``ReductionStreaming``
    /// asks too, and leaves such a program to this pass: the product's result is written either
    /// way, so the clamp costs nothing inside the product, and the reduction then reads one
    /// tensor instead of running the program over it first (MobileNetV2's and ResNet-50's last
    /// activation before the global pool, which ``ConvolutionMeanFusion`` then runs with the
    /// convolution).
    static func epilogue(
        for root: Int, in state: PlanningState, programsReading: [Int]
    ) -> ExecutionPlan.ConvolutionEpilogue? {
        guard let group = state.groups[root] else { return nil }
        let entries = state.entries
        for reading in readings(of: group.program) {
            let conv = group.leaves[reading.conv]
            let residual = reading.residual.map { group.leaves[$0] }
            let columnBias = reading.columnBias.map { group.leaves[$0] }
            let lower = reading.lower.map { group.leaves[$0] }
            let upper = reading.upper.map { group.leaves[$0] }
            let isMatmul: Bool
            switch entries[conv].op {
            case .conv2d: isMatmul = false
            case .matmul: isMatmul = true
            default: continue
            }
            guard programsReading[conv] == 1,
                state.consumers[conv].allSatisfy(state.fusible), !state.requested.contains(conv),
                entries[conv].type == .float32, entries[root].type == .float32,
                entries[conv].shape == entries[root].shape
            else { continue }
            let bounds = [lower, upper].compactMap { $0 }
            guard bounds.allSatisfy({ entries[$0].type == .float32 && entries[$0].shape.reduce(1, *) == 1 }),
                !bounds.contains(conv)
            else { continue }
            if let residual {
                guard residual != conv, entries[residual].type == .float32,
                    entries[residual].shape == entries[conv].shape
                        || (isMatmul && columnBias == nil
                            && isColumnBias(entries[residual].shape, of: entries[conv].shape))
                else { continue }
            }
            if let columnBias {
                guard isMatmul, columnBias != conv, columnBias != residual, entries[columnBias].type == .float32,
                    isColumnBias(entries[columnBias].shape, of: entries[conv].shape)
                else { continue }
            }
            return ExecutionPlan.ConvolutionEpilogue(
                conv: conv, residual: residual, columnBias: columnBias, lower: lower, upper: upper,
                lowerOnLeft: reading.lowerOnLeft, upperOnLeft: reading.upperOnLeft)
        }
        return nil
    }

    /// Whether a leaf of `shape` broadcast against a product's result of `result` shape adds
    /// one value per column: `[n]`, or `[1, …, 1, n]` of at most the result's rank.
    static func isColumnBias(_ shape: [Int], of result: [Int]) -> Bool {
        guard let n = result.last, let last = shape.last, last == n, shape.count <= result.count else { return false }
        return shape.dropLast().allSatisfy { $0 == 1 }
    }

    /// Every way to read `program` as `min(max(t, lower), upper)` with `t` a leaf, the sum of
    /// two leaves, or `(p + q) + r` of three (`p + q` the product and its column bias, either
    /// way round: floats add in that order, so the bias must be the inner sum's), either bound
    /// absent but something to do, and each of `add`, `max` and `min` read with its operands
    /// either way round. The plan takes the first reading whose convolution qualifies; readings
    /// with bounds on the right come first.
    static func readings(of program: FusedProgram) -> [Reading] {
        guard program.computeType == .float32, program.outputs.count == 1 else { return [] }
        let instructions = program.instructions
        let leaf = program.inputIndex(loadedBy:)
        /// The ways to peel an optional `op(rest, bound)` off register `r`, the bound a leaf.
        func clamps(_ op: BinaryOp, _ r: Int) -> [(rest: Int, bound: Int?, onLeft: Bool)] {
            guard case .binary(let o, let a, let b) = instructions[r], o == op else { return [(r, nil, false)] }
            var ways: [(rest: Int, bound: Int?, onLeft: Bool)] = []
            if let k = leaf(b) { ways.append((a, k, false)) }
            if let k = leaf(a) { ways.append((b, k, true)) }
            return ways
        }
        var readings: [Reading] = []
        for upper in clamps(.min, program.outputs[0]) {
            for lower in clamps(.max, upper.rest) {
                func reading(_ conv: Int, _ residual: Int?) -> Reading {
                    Reading(
                        conv: conv, residual: residual, lower: lower.bound, upper: upper.bound,
                        lowerOnLeft: lower.onLeft, upperOnLeft: upper.onLeft)
                }
                let t = lower.rest
                if let input = leaf(t) {
                    if lower.bound != nil || upper.bound != nil { readings.append(reading(input, nil)) }
                } else if case .binary(.add, let a, let b) = instructions[t], let ka = leaf(a), let kb = leaf(b),
                    ka != kb
                {
                    readings.append(reading(ka, kb))
                    readings.append(reading(kb, ka))
                } else if case .binary(.add, let a, let b) = instructions[t] {
                    // (p + q) + r or r + (p + q): the inner sum is the product and its bias.
                    for (inner, outer) in [(a, b), (b, a)] {
                        guard case .binary(.add, let p, let q) = instructions[inner], let kp = leaf(p),
                            let kq = leaf(q), let kr = leaf(outer), kp != kq, kp != kr, kq != kr
                        else { continue }
                        for (product, bias) in [(kp, kq), (kq, kp)] {
                            var r = reading(product, kr)
                            r.columnBias = bias
                            readings.append(r)
                        }
                    }
                }
            }
        }
        return readings
    }
}

extension ExecutionPlan.ConvolutionEpilogue {
    /// The clamp for this run: the bounds' values (single float32 elements) from `values`.
    func clamp(_ values: [TensorValue?]) -> ConvolutionClamp {
        func bound(_ entry: Int?, _ none: Float) -> Float {
            guard let entry, let v = values[entry] else { return none }
            return (v.pointer + v.layout.offset * v.type.byteCount).assumingMemoryBound(to: Float.self).pointee
        }
        return ConvolutionClamp(lower: bound(lower, -.infinity), upper: bound(upper, .infinity))
    }

    /// Gives the outputs equal to a zero bound written on the left that bound's bits, as
    /// `max(lower, x)` and `min(upper, x)` do on a tie (the kernel keeps `x`'s sign of zero).
    /// `output` is the step's compact float32 result; nothing runs for a bound on the right or
    /// a bound that is not zero.
    func giveTiesTheLeftBound(_ clamp: ConvolutionClamp, in output: TensorValue) {
        var ties: [Float] = []
        if lowerOnLeft && clamp.lower == 0 { ties.append(clamp.lower) }
        if upperOnLeft && clamp.upper == 0 { ties.append(clamp.upper) }
        guard !ties.isEmpty else { return }
        let count = output.layout.shape.reduce(1, *)
        let p = (output.storage.pointer + output.layout.offset * output.type.byteCount).assumingMemoryBound(
            to: Float.self)
        for bound in ties {
            for i in 0..<count where p[i] == 0 { p[i] = bound }
        }
    }
}
