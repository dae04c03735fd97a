import TesseraGraph
import TesseraKernels
import TesseraTensor

/// `linear` and `matmul`: matrix products on the GEMM kernel. Weights stay in their
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
            return { args in [try matmul(args[x], args[y], transposeX: transposeX, transposeY: transposeY)] }
        },
        MILOp("scaled_dot_product_attention", batch: .always(.attention), cost: .attention) { lowering in
            let (q, k, v) = (try lowering.tensor("query"), try lowering.tensor("key"), try lowering.tensor("value"))
            let mask = try lowering.optionalTensor("attn_mask")
            return { args in
                // softmax(Q·Kᵀ/√E + mask)·V; a bool mask keeps the positions where it is true.
                let query = args[q].asFloat
                try require(query.rank >= 2, "query must have rank ≥ 2, got \(query.shape)")
                let scale = 1 / Double(query.shape[query.rank - 1]).squareRoot()
                var scores = try MLTensor.elementwise(
                    .mul, try matmul(query, args[k].asFloat, transposeX: false, transposeY: true), query.scalar(scale))
                if let mask {
                    let m = args[mask]
                    scores =
                        m.kernelType == .bool
                        ? try .selecting(m, scores, scores.scalar(-.infinity))
                        : try .elementwise(.add, scores, m.asFloat)
                }
                let weights = MLTensor(.softmax(axis: scores.rank - 1), [scores])
                return [try matmul(weights, args[v].asFloat, transposeX: false, transposeY: false)]
            }
        },
    ]

    /// `x · weightᵀ + bias` over the last axis of `x` (any rank ≥ 1).
    static func linear(_ x: MLTensor, weight: MLTensor, bias: MLTensor?) throws -> MLTensor {
        try require(weight.rank == 2, "weight must be [D_out, D_in], got \(weight.shape)")
        try require(
            x.rank >= 1 && x.shape[x.rank - 1] == weight.shape[1],
            "input \(x.shape) does not end in D_in = \(weight.shape[1])")
        let (outFeatures, inFeatures) = (weight.shape[0], weight.shape[1])
        let leading = Array(x.shape.dropLast())
        // One GEMM over all leading rows: [rows, D_in] · [D_in, D_out].
        let rows = try x.reshaped(checked: [leading.reduce(1, *), inFeatures])
        var y = MLTensor(.matmul, rows, MLTensor(.permute([1, 0]), [weight]))
        if let bias {
            try require(bias.scalarCount == outFeatures, "bias \(bias.shape) does not have \(outFeatures) values")
            y = MLTensor(.binary(.add), y, try bias.reshaped(checked: [outFeatures]))
        }
        return try y.reshaped(checked: leading + [outFeatures])
    }

    /// NumPy `matmul` with optional transposes of the last two axes of each operand.
    static func matmul(_ a: MLTensor, _ b: MLTensor, transposeX: Bool, transposeY: Bool) throws -> MLTensor {
        var (x, y) = MLTensor.promoted(a, b)
        if x.kernelType == .bool { (x, y) = (x.asFloat, y.asFloat) }
        try require(x.rank >= 1 && y.rank >= 1, "operands must have rank ≥ 1")
        func swapLast(_ t: MLTensor) -> MLTensor {
            guard t.rank >= 2 else { return t }
            var p = Array(0..<t.rank)
            p.swapAt(t.rank - 1, t.rank - 2)
            return MLTensor(.permute(p), [t])
        }
        if transposeX { x = swapLast(x) }
        if transposeY { y = swapLast(y) }
        let vectorX = x.rank == 1
        let vectorY = y.rank == 1
        if vectorX { x = MLTensor(.reshape([1, x.shape[0]]), [x]) }
        if vectorY { y = MLTensor(.reshape([y.shape[0], 1]), [y]) }
        try require(x.shape[x.rank - 1] == y.shape[y.rank - 2], "inner dimensions differ: \(a.shape) vs \(b.shape)")
        guard
            let batch = StridedLayout.broadcastShape(Array(x.shape.dropLast(2)), Array(y.shape.dropLast(2)))
        else { throw OperandError("batch dimensions of \(a.shape) and \(b.shape) are not broadcastable") }
        var result = MLTensor(.matmul, x, y)
        if vectorX || vectorY {
            var shape = batch
            if !vectorX { shape.append(x.shape[x.rank - 2]) }
            if !vectorY { shape.append(y.shape[y.rank - 1]) }
            result = try result.reshaped(checked: shape)
        }
        return result
    }
}
