import TesseraGraph
import TesseraKernels
import TesseraTensor

/// The `reduce_*` ops: sums, means, extremes, products, norms, log-sum-exp and arg-extremes.
extension MILOp {
    static let reductionOps: [MILOp] = {
        let reductions: [(String, ReductionOp)] = [
            ("reduce_sum", .sum), ("reduce_mean", .mean), ("reduce_max", .max), ("reduce_min", .min),
            ("reduce_prod", .product),
        ]
        var ops = reductions.map { type, op in
            reduction(type) { x, axes, keep in try x.reduced(op, axes: axes, keepDims: keep) }
        }
        ops.append(
            reduction("reduce_sum_square") { x, axes, keep in
                try MLTensor(.unary(.square), [x.asFloat]).reduced(.sum, axes: axes, keepDims: keep)
            })
        ops.append(
            reduction("reduce_l1_norm") { x, axes, keep in
                try x.asFloat.elementwise(.abs).reduced(.sum, axes: axes, keepDims: keep)
            })
        ops.append(
            reduction("reduce_l2_norm") { x, axes, keep in
                try MLTensor(.unary(.square), [x.asFloat]).reduced(.sum, axes: axes, keepDims: keep).elementwise(.sqrt)
            })
        ops.append(
            reduction("reduce_log_sum") { x, axes, keep in
                try x.asFloat.reduced(.sum, axes: axes, keepDims: keep).elementwise(.log)
            })
        ops.append(
            reduction("reduce_log_sum_exp") { x, axes, keep in
                let v = x.asFloat
                let peak = try v.reduced(.max, axes: axes, keepDims: true)
                let sum = try MLTensor.elementwise(.sub, v, peak).elementwise(.exp).reduced(
                    .sum, axes: axes, keepDims: true)
                let result = try MLTensor.elementwise(.add, sum.elementwise(.log), peak)
                if keep { return result }
                let dropped = try v.axes(axes ?? Array(0..<v.rank))
                return try result.reshaped(
                    checked: v.shape.indices.filter { !dropped.contains($0) }.map { v.shape[$0] })
            })
        for (type, op) in [("reduce_argmax", ReductionOp.argmax), ("reduce_argmin", .argmin)] {
            ops.append(
                MILOp(
                    type,
                    batch: .from { l in
                        .reduction(axes: [try l.int("axis") ?? -1], keepDims: try l.bool("keep_dims") ?? false)
                    }, cost: .reduction
                ) { lowering in
                    let x = try lowering.tensor("x")
                    let axis = try lowering.int("axis") ?? -1
                    let keep = try lowering.bool("keep_dims") ?? false
                    return { args in
                        let v = args[x]
                        try require(v.shape[try v.axis(axis)] > 0, "cannot reduce an empty axis")
                        return [try v.reduced(op, axes: [axis], keepDims: keep)]
                    }
                })
        }
        return ops
    }()

    /// The `reduce_*` op `name` of `x`, `axes` (optional: all) and `keep_dims` (default false).
    static func reduction(
        _ name: String, _ body: @escaping @Sendable (MLTensor, [Int]?, Bool) throws -> MLTensor
    ) -> MILOp {
        MILOp(name, batch: .reduction, cost: .reduction) { lowering in
            let x = try lowering.tensor("x")
            let axes = try lowering.ints("axes")
            let keep = try lowering.bool("keep_dims") ?? false
            return { args in [try body(args[x], axes, keep)] }
        }
    }

}
