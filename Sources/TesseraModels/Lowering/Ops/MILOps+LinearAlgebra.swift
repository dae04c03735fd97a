import TesseraTensor

/// `linear`, `matmul` and `scaled_dot_product_attention` on the public `MLTensor.matmul`
/// (NumPy's rules) and Tessera's `scaledDotProductAttention`. Weights stay in their
/// `[D_out, D_in]` layout; the transpose is a view, which GEMM reads with a transpose flag
/// instead of a copy.
extension MILOp {
    static let linearAlgebraOps: [MILOp] = [
        MILOp("linear", batch: .always(.linear), cost: .linear) { lowering in
            let x = try lowering.tensor("x")
            let weight = try lowering.tensor("weight")
            let bias = try lowering.optionalTensor("bias")
            return { args in
                [try linear(args[x].asFloat, weight: args[weight].asFloat, bias: bias.map { args[$0].asFloat })]
            }
        },
        MILOp(
            "matmul",
            batch: .from { l in
                .matmul(transposeX: try l.bool("transpose_x") ?? false, transposeY: try l.bool("transpose_y") ?? false)
            }, cost: .matmul
        ) { lowering in
            let (x, y) = (try lowering.tensor("x"), try lowering.tensor("y"))
            let transposeX = try lowering.bool("transpose_x") ?? false
            let transposeY = try lowering.bool("transpose_y") ?? false
            return { args in
                var (a, b) = MLTensor.promoted(args[x], args[y])
                if a.kernelType == .bool { (a, b) = (a.asFloat, b.asFloat) }
                if transposeX { a = a.swappingLastAxes }
                if transposeY { b = b.swappingLastAxes }
                return [a.matmul(b)]
            }
        },
        MILOp("scaled_dot_product_attention", batch: .always(.attention), cost: .attention) { lowering in
            let (q, k, v) = (try lowering.tensor("query"), try lowering.tensor("key"), try lowering.tensor("value"))
            let mask = try lowering.optionalTensor("attn_mask")
            return { args in
                // softmax(Q·Kᵀ/√E + mask)·V; a bool mask keeps the positions where it is true.
                let (query, key, value) = (args[q].asFloat, args[k].asFloat, args[v].asFloat)
                let m = mask.map { args[$0].kernelType == .bool ? args[$0] : args[$0].asFloat }
                return [MLTensor.scaledDotProductAttention(query: query, key: key, value: value, mask: m)]
            }
        },
    ]

    /// `x · weightᵀ + bias` over the last axis of `x` (any rank ≥ 1), as one GEMM over all
    /// leading rows: `[rows, D_in] · [D_in, D_out]`. The reshapes and the product report
    /// an input or bias that does not fit.
    ///
    /// When every leading axis but the last has size 1 (`[1, L, D_in]`, a transformer's
    /// activations) the product takes `x` as it is — a batch of one, the same GEMM — so the
    /// bias and what follows (an activation) read the product itself, not a reshaped view of
    /// it, and fuse into its step (`ConvolutionEpilogueFusion`, `LinearActivationFusion`).
    static func linear(_ x: MLTensor, weight: MLTensor, bias: MLTensor?) throws -> MLTensor {
        try require(weight.rank == 2, "weight must be [D_out, D_in], got \(weight.shape)")
        let (outFeatures, inFeatures) = (weight.shape[0], weight.shape[1])
        let leading = Array(x.shape.dropLast())
        if x.rank >= 2 && leading.dropLast().allSatisfy({ $0 == 1 }) {
            try require(x.shape[x.rank - 1] == inFeatures, "x \(x.shape) does not fit weight \(weight.shape)")
            let y = x.matmul(weight.transposed())
            guard let bias else { return y }
            return y + bias.reshapedIfNeeded(to: [outFeatures])
        }
        var y = x.reshapedIfNeeded(to: [leading.reduce(1, *), inFeatures]).matmul(weight.transposed())
        if let bias {
            y = y + bias.reshapedIfNeeded(to: [outFeatures])
        }
        return y.reshapedIfNeeded(to: leading + [outFeatures])
    }
}

extension MLTensor {
    /// The last two axes swapped (a view); a tensor of rank below 2 as it is.
    var swappingLastAxes: MLTensor {
        guard rank >= 2 else { return self }
        var permutation = Array(0..<rank)
        permutation.swapAt(rank - 1, rank - 2)
        return transposed(permutation: permutation)
    }
}
