/// One direction's weights of a recurrent layer, in the layout model files store them: gates
/// stacked in ``RecurrentCell``'s order (rnn `[h]`, gru `[r, z, o]`, lstm `[i, f, o, z]`).
///
/// ```swift
/// // a GRU with H = 2, I = 3, from MIL's [r, o, z] stacking
/// let w = RecurrentDirectionWeights(input: rzo_ih, recurrent: rzo_hh, inputBias: rzo_b)
/// let packed = try parameters.packWeights([w])
/// ```
package struct RecurrentDirectionWeights: Sendable {
    /// `W_ih`, `[G·H, I]` row-major.
    package var input: [Float]
    /// `W_hh`, `[G·H, H]` row-major.
    package var recurrent: [Float]
    /// The bias added to the input projection, `[G·H]`; `nil` for zeros.
    package var inputBias: [Float]?
    /// The bias added to the hidden projection `R·h` (inside `r ⊙ (…)` for a reset-after GRU's
    /// candidate), `[G·H]`; `nil` for zeros. For every other gate the two biases are simply summed.
    package var hiddenBias: [Float]?
    /// LSTM peephole weights `[i, f, o]`, `[3·H]`; `nil` for zeros.
    package var peephole: [Float]?

    /// Weights of one direction.
    package init(
        input: [Float], recurrent: [Float], inputBias: [Float]? = nil, hiddenBias: [Float]? = nil,
        peephole: [Float]? = nil
    ) {
        self.input = input
        self.recurrent = recurrent
        self.inputBias = inputBias
        self.hiddenBias = hiddenBias
        self.peephole = peephole
    }
}

extension RecurrentParameters {
    /// The weights of every direction (forward first) in the layout the kernel reads
    /// (``packedLayout``), done once when a model loads.
    ///
    /// - Throws: ``OpError`` naming the cell when there are not ``RecurrentDirection/count``
    ///   directions or an array has the wrong element count.
    package func packWeights(_ directions: [RecurrentDirectionWeights]) throws(OpError) -> [Float] {
        let name = cell.name
        try OpError.require(
            directions.count == direction.count,
            "[\(name)] \(direction) needs \(direction.count) sets of weights, got \(directions.count)")
        let (h, i, width) = (hiddenSize, inputSize, gateWidth)
        let layout = packedLayout
        var packed = [Float](repeating: 0, count: packedCount)
        for (d, weights) in directions.enumerated() {
            try OpError.require(
                weights.input.count == width * i,
                "[\(name)] input weights have \(weights.input.count) elements, expected [\(width), \(i)]")
            try OpError.require(
                weights.recurrent.count == width * h,
                "[\(name)] recurrent weights have \(weights.recurrent.count) elements, expected [\(width), \(h)]")
            for (label, bias) in [("input bias", weights.inputBias), ("hidden bias", weights.hiddenBias)] {
                try OpError.require(
                    bias == nil || bias?.count == width,
                    "[\(name)] \(label) has \(bias?.count ?? 0) elements, expected [\(width)]")
            }
            try OpError.require(
                weights.peephole == nil || (layout.count - layout.peephole > 0 && weights.peephole?.count == 3 * h),
                "[\(name)] peephole has \(weights.peephole?.count ?? 0) elements, expected [\(3 * h)] (LSTM only)")
            let base = d * layout.count
            // W_ih [G·H, I] → [I, G·H] and W_hh [G·H, H] → [H, G·H], so x·W and h·R are plain GEMMs.
            for row in 0..<width {
                for column in 0..<i { packed[base + column * width + row] = weights.input[row * i + column] }
                for column in 0..<h {
                    packed[base + layout.recurrent + column * width + row] = weights.recurrent[row * h + column]
                }
            }
            for g in 0..<width {
                packed[base + layout.inputBias + g] = weights.inputBias?[g] ?? 0
                packed[base + layout.hiddenBias + g] = weights.hiddenBias?[g] ?? 0
            }
            if let peephole = weights.peephole {
                for g in 0..<3 * h { packed[base + layout.peephole + g] = peephole[g] }
            }
        }
        return packed
    }
}
