/// The fused gate step of each cell: one pass over a batch row's `H` hidden units that reads
/// the two projections, applies the activations and writes the new states, sixteen lanes at a
/// time.
extension RecurrentKernels {
    /// Lanes `j..<j+count` of `p` (zeros past `count`).
    @inline(__always)
    static func load(_ p: UnsafePointer<Float>, _ j: Int, _ count: Int) -> SIMD16<Float> {
        if count == 16 { return UnsafeRawPointer(p + j).loadUnaligned(as: SIMD16<Float>.self) }
        var v = SIMD16<Float>()
        for lane in 0..<count { v[lane] = p[j + lane] }
        return v
    }

    /// Writes the first `count` lanes of `v` at `p + j`.
    @inline(__always)
    static func store(_ v: SIMD16<Float>, _ p: UnsafeMutablePointer<Float>, _ j: Int, _ count: Int) {
        if count == 16 {
            UnsafeMutableRawPointer(p + j).storeBytes(of: v, as: SIMD16<Float>.self)
            return
        }
        for lane in 0..<count { p[j + lane] = v[lane] }
    }

    /// `h = activation(a + r)` for one row.
    static func rnnRow(
        _ activation: RecurrentActivation, a: UnsafePointer<Float>, r: UnsafePointer<Float>,
        h: UnsafeMutablePointer<Float>, hidden: Int
    ) {
        var j = 0
        while j < hidden {
            let n = Swift.min(16, hidden - j)
            store(activation.apply(load(a, j, n) + load(r, j, n)), h, j, n)
            j += n
        }
    }

    /// One LSTM row (``LSTMCell``): `a`, `r` the `[i, f, o, z]` projections, `peephole`
    /// `[i, f, o]` or `nil`; `h` and `c` updated in place.
    static func lstmRow(
        _ cell: LSTMCell, a: UnsafePointer<Float>, r: UnsafePointer<Float>, peephole: UnsafePointer<Float>?,
        h: UnsafeMutablePointer<Float>, c: UnsafeMutablePointer<Float>, hidden: Int
    ) {
        let clip = cell.clip ?? .infinity
        let (low, high) = (SIMD16<Float>(repeating: -clip), SIMD16<Float>(repeating: clip))
        var j = 0
        while j < hidden {
            let n = Swift.min(16, hidden - j)
            let previous = load(c, j, n)
            var preI = load(a, j, n) + load(r, j, n)
            var preF = load(a, hidden + j, n) + load(r, hidden + j, n)
            var preO = load(a, 2 * hidden + j, n) + load(r, 2 * hidden + j, n)
            let preZ = load(a, 3 * hidden + j, n) + load(r, 3 * hidden + j, n)
            if let peephole {
                preI += load(peephole, j, n) * previous
                preF += load(peephole, hidden + j, n) * previous
            }
            let i = cell.gate.apply(preI)
            let z = cell.cell.apply(preZ)
            let f = cell.coupledInputForget ? 1 - i : cell.gate.apply(preF)
            var next = f * previous + i * z
            if cell.clip != nil { next = next.clamped(lowerBound: low, upperBound: high) }
            if let peephole { preO += load(peephole, 2 * hidden + j, n) * next }
            let o = cell.gate.apply(preO)
            store(next, c, j, n)
            store(o * cell.output.apply(next), h, j, n)
            j += n
        }
    }

    /// One reset-after GRU row: `a`, `r` the `[r, z, o]` projections (the hidden one with its
    /// bias); `h` updated in place.
    static func gruResetAfterRow(
        gate: RecurrentActivation, candidate: RecurrentActivation, a: UnsafePointer<Float>, r: UnsafePointer<Float>,
        h: UnsafeMutablePointer<Float>, hidden: Int
    ) {
        var j = 0
        while j < hidden {
            let n = Swift.min(16, hidden - j)
            let reset = gate.apply(load(a, j, n) + load(r, j, n))
            let update = gate.apply(load(a, hidden + j, n) + load(r, hidden + j, n))
            let o = candidate.apply(load(a, 2 * hidden + j, n) + reset * load(r, 2 * hidden + j, n))
            store((1 - update) * o + update * load(h, j, n), h, j, n)
            j += n
        }
    }

    /// The first half of a reset-before GRU row: the reset and update gates, written over the
    /// hidden projection's `r` and `z` columns of `r`, and `resetHidden = reset ⊙ h` for the
    /// candidate's product.
    static func gruGatesRow(
        gate: RecurrentActivation, a: UnsafePointer<Float>, r: UnsafeMutablePointer<Float>, h: UnsafePointer<Float>,
        resetHidden: UnsafeMutablePointer<Float>, hidden: Int
    ) {
        var j = 0
        while j < hidden {
            let n = Swift.min(16, hidden - j)
            let reset = gate.apply(load(a, j, n) + load(r, j, n))
            store(gate.apply(load(a, hidden + j, n) + load(r, hidden + j, n)), r, hidden + j, n)
            store(reset * load(h, j, n), resetHidden, j, n)
            j += n
        }
    }

    /// The second half: `o = candidate(a_o + R_o·(reset ⊙ h) + b_ho)` (the product already in
    /// `r`'s `o` columns) and the new `h`, with the update gate from ``gruGatesRow``.
    static func gruCandidateRow(
        candidate: RecurrentActivation, a: UnsafePointer<Float>, r: UnsafePointer<Float>,
        h: UnsafeMutablePointer<Float>, hidden: Int
    ) {
        var j = 0
        while j < hidden {
            let n = Swift.min(16, hidden - j)
            let update = load(r, hidden + j, n)
            let o = candidate.apply(load(a, 2 * hidden + j, n) + load(r, 2 * hidden + j, n))
            store((1 - update) * o + update * load(h, j, n), h, j, n)
            j += n
        }
    }
}
