import TesseraTensor

/// The `reduce_*` ops on the public `MLTensor` reductions: sums, means, extremes, products,
/// norms, log-sum-exp and arg-extremes. `axes` absent means every axis; an empty list
/// reduces nothing.
extension MILOp {
    static let reductionOps: [MILOp] = [
        reduction("reduce_sum") { x, axes, keep in x.summable.sum(alongAxes: axes, keepRank: keep) },
        reduction("reduce_mean") { x, axes, keep in x.asFloat.mean(alongAxes: axes, keepRank: keep) },
        reduction("reduce_prod") { x, axes, keep in x.summable.product(alongAxes: axes, keepRank: keep) },
        reduction("reduce_max", extremum: true) { x, axes, keep in x.summable.max(alongAxes: axes, keepRank: keep) },
        reduction("reduce_min", extremum: true) { x, axes, keep in x.summable.min(alongAxes: axes, keepRank: keep) },
        reduction("reduce_sum_square") { x, axes, keep in x.asFloat.squared().sum(alongAxes: axes, keepRank: keep) },
        reduction("reduce_l1_norm") { x, axes, keep in x.asFloat.abs().sum(alongAxes: axes, keepRank: keep) },
        reduction("reduce_l2_norm") { x, axes, keep in
            x.asFloat.squared().sum(alongAxes: axes, keepRank: keep).squareRoot()
        },
        reduction("reduce_log_sum") { x, axes, keep in x.asFloat.sum(alongAxes: axes, keepRank: keep).log() },
        reduction("reduce_log_sum_exp") { x, axes, keep in x.asFloat.logSumExp(alongAxes: axes, keepRank: keep) },
        argExtremum("reduce_argmax") { x, axis, keep in x.argmax(alongAxis: axis, keepRank: keep) },
        argExtremum("reduce_argmin") { x, axis, keep in x.argmin(alongAxis: axis, keepRank: keep) },
    ]

    /// The `reduce_*` op `name` of `x`, `axes` (optional: all) and `keep_dims` (default false).
    /// An `extremum` (max, min) has no value for an empty axis, so reducing one throws.
    static func reduction(
        _ name: String, extremum: Bool = false,
        _ body: @escaping @Sendable (MLTensor, [Int], Bool) -> MLTensor
    ) -> MILOp {
        MILOp(name, batch: .reduction, cost: .reduction) { lowering in
            let x = try lowering.tensor("x")
            let axes = try lowering.ints("axes")
            let keep = try lowering.bool("keep_dims") ?? false
            return { args in
                let v = args[x]
                let reduced = try v.axes(axes ?? Array(0..<v.rank), op: name)
                if reduced.isEmpty { return [v] }
                if extremum, let empty = reduced.first(where: { v.shape[$0] == 0 }) {
                    throw OperandError("cannot reduce the empty axis \(empty)")
                }
                return [body(v, reduced, keep)]
            }
        }
    }

    /// `reduce_argmax` or `reduce_argmin` of `x` along `axis` (default -1).
    static func argExtremum(_ name: String, _ body: @escaping @Sendable (MLTensor, Int, Bool) -> MLTensor) -> MILOp {
        MILOp(
            name,
            batch: .from { l in
                .reduction(axes: [try l.int("axis") ?? -1], keepDims: try l.bool("keep_dims") ?? false)
            }, cost: .reduction
        ) { lowering in
            let x = try lowering.tensor("x")
            let axis = try lowering.int("axis") ?? -1
            let keep = try lowering.bool("keep_dims") ?? false
            return { args in
                let v = args[x]
                try require(v.shape[try v.axis(axis, op: name)] > 0, "cannot reduce an empty axis")
                return [body(v.summable, axis, keep)]
            }
        }
    }
}

extension MLTensor {
    /// The tensor with bools as Int32, which the arithmetic reductions take.
    fileprivate var summable: MLTensor { kernelType == .bool ? asInt32 : self }
}
