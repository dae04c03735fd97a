import TesseraTensor

/// `einsum`: the two equation forms the MIL op accepts (iOS 15+), a batched matrix product
/// over axes -1 and -3 with the others as batch.
///
/// - `nchw,nwhu->nchu`: `[N, C, H, W1]` by `[N, W1, H, W2]` gives `[N, C, H, W2]`;
/// - `chw,whr->chr`: `[C, H, W1]` by `[W1, H, W2]` gives `[C, H, W2]`;
///
/// and every renaming of their letters (`abcd,adce->abce`). `N` and `H` broadcast when one
/// operand has size 1 there. Both run as one GEMM call: `H` moves next to `N` as a batch axis
/// (a view), the product is a broadcast batched `matmul`, and the result moves `H` back.
extension MILOp {
    static let einsumOps: [MILOp] = [
        // The batch axis would have to be N on both operands; batches run as a loop.
        MILOp("einsum", batch: .notSeparable, cost: .einsum) { lowering in
            let values = try lowering.tensors("values")
            guard values.count == 2 else {
                throw lowering.invalid("'values' must hold two tensors, got \(values.count)")
            }
            let equation = try lowering.required(lowering.string("equation"), "equation")
            guard let rank = einsumRank(equation) else {
                throw lowering.unsupported(
                    "the einsum equation '\(equation)' (MIL allows nchw,nwhu->nchu and chw,whr->chr)")
            }
            return { args in [try einsum(args[values[0]], args[values[1]], rank: rank)] }
        }
    ]

    /// The rank (4 or 3) of the MIL einsum form `equation` spells, or `nil` when it is not one.
    ///
    /// Letters are numbered in order of first appearance over input 1, input 2 and the output,
    /// as coremltools' `parse_einsum_equation` does, so any renaming of a form matches it.
    static func einsumRank(_ equation: String) -> Int? {
        let sides = equation.filter { $0 != " " }.split(separator: "-", omittingEmptySubsequences: false)
        guard sides.count == 2, sides[1].first == ">" else { return nil }
        let inputs = sides[0].split(separator: ",", omittingEmptySubsequences: false)
        guard inputs.count == 2 else { return nil }
        var numbers: [Character: Int] = [:]
        let vectors = [inputs[0], inputs[1], sides[1].dropFirst()].map { term in
            term.map { letter in
                if let known = numbers[letter] { return known }
                numbers[letter] = numbers.count
                return numbers.count - 1
            }
        }
        if vectors == [[0, 1, 2, 3], [0, 3, 2, 4], [0, 1, 2, 4]] { return 4 }
        if vectors == [[0, 1, 2], [2, 1, 3], [0, 1, 3]] { return 3 }
        return nil
    }

    /// `out[n, c, h, u] = Σ_w x[n, c, h, w] · y[n, w, h, u]` (rank 4; rank 3 without `n`).
    static func einsum(_ x: MLTensor, _ y: MLTensor, rank: Int) throws -> MLTensor {
        try require(
            x.rank == rank && y.rank == rank,
            "einsum of rank \(rank) needs two rank-\(rank) operands, got \(x.shape) and \(y.shape)")
        // [N, C, H, W1] → [N, H, C, W1] and [N, W1, H, W2] → [N, H, W1, W2]; H is then a batch axis.
        let swap = rank == 4 ? [0, 2, 1, 3] : [1, 0, 2]
        // The matmul rule reports contracted sizes that differ and batch sizes that do not broadcast.
        let product = x.transposed(permutation: swap).matmul(y.transposed(permutation: swap))
        return product.transposed(permutation: swap)
    }
}
