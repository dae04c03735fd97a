/// How one lowered operation treats a batch axis: what lets a batch of predictions run as one
/// execution (items concatenated along axis 0) and give each item the result it would get alone.
///
/// Decided at load from the op type and its constant parameters
/// (``make(for:)``); checked per batched run against the operands' batch axes and the concrete
/// shapes (`LoweredFunction+Batching.swift`). Operand positions are those the op's lowering
/// registered, in order (`x` first for every op that has one). An op type without a rule is
/// ``notSeparable``: a batch through it runs as a loop.
enum BatchRule: Sendable, Equatable {
    /// Element-wise with NumPy broadcasting over every operand (arithmetic, activations,
    /// `select`, `cast`, `fill_like`): the batch axis lines up from the right, and an operand
    /// that does not depend on the batch has size 1 there or does not reach it.
    case elementwise
    /// Shape-preserving, mixing elements only along `axes` (negative from the end; `nil`:
    /// all): `softmax`, `layer_norm`, `cumsum`, `reverse`, `band_part`, `l2_norm`. Operands
    /// after the first (gamma, beta) must not depend on the batch.
    case alongAxes([Int]?)
    /// A reduction over `axes` (`nil`: all), keeping them as size 1 or dropping them.
    case reduction(axes: [Int]?, keepDims: Bool)
    /// `transpose`: the batch axis moves with the permutation.
    case transpose(perm: [Int])
    /// A row-major reshape (`reshape`, `reshape_like`, `expand_dims`, `squeeze`,
    /// `flatten2d`): separable when every item stays one contiguous run inside each group of
    /// the dimensions before the batch axis; operands after the first only give the shape.
    case reshape
    /// `matmul` with its transpose flags: the batch axis is a broadcast batch dimension of
    /// both operands, or the rows of `x`, or the columns of `y`, never the contracted axis.
    case matmul(transposeX: Bool, transposeY: Bool)
    /// `linear`: the batch axis is a leading axis of `x`; weight and bias do not depend on it.
    case linear
    /// `scaled_dot_product_attention`: the batch axis is a broadcast dimension before the
    /// last two of query, key, value (and mask).
    case attention
    /// Ops over `[N, C, spatial…]` that treat each sample alone (`conv`, pooling, batch and
    /// instance norm, `prelu`, resizing, `pixel_shuffle`…): batch on axis 0, other operands
    /// (weights) batch-independent.
    case leadingAxis
    /// `concat` along `axis`: every operand carries the batch on the same other axis.
    case concat(axis: Int)
    /// `stack` along a new `axis`.
    case stack(axis: Int)
    /// `split` along `axis`: the batch on another axis, every result keeps it.
    case split(axis: Int)
    /// `tile` with `reps`: a repetition of 1 on the batch axis.
    case tile(reps: [Int])
    /// `pad` with (before, after) pairs for the last axes: no padding on the batch axis.
    case pad([Int])
    /// `slice_by_index` / `slice_by_size`: the whole batch axis, stride 1, not squeezed.
    /// Operands after the first are bounds, which must not be read from batched data.
    case slice(strides: [Int]?, squeeze: [Bool]?)
    /// `gather` (no batch dims) along `axis`: the batch on a non-gathered axis of `x`, or
    /// anywhere in `indices` when `x` does not depend on the batch.
    case gather(axis: Int)
    /// `shape`: the result describes the batch size but is not batch data; it may only feed
    /// reshape targets and slice bounds.
    case shapeOf
    /// Mixes items or is not known to keep them apart: a batch through it runs as a loop.
    case notSeparable

    /// The rule for the operation `lowering` has just lowered (its operands are registered).
    /// A parameter that is not a readable constant gives ``notSeparable``.
    static func make(for lowering: OperationLowering) -> BatchRule {
        (try? decide(lowering)) ?? .notSeparable
    }

    private static let elementwiseTypes: Set<String> = [
        "add", "sub", "mul", "pow", "maximum", "minimum", "equal", "not_equal", "less", "less_equal", "greater",
        "greater_equal", "logical_and", "logical_or", "logical_xor", "mod", "real_div", "floor_div", "abs", "acos",
        "asin", "atan", "atanh", "ceil", "cos", "cosh", "erf", "exp", "exp2", "floor", "round", "sign", "sin", "sinh",
        "sqrt", "square", "tan", "tanh", "sigmoid", "log", "rsqrt", "inverse", "logical_not", "identity", "cast",
        "select", "relu", "relu6", "clip", "threshold", "leaky_relu", "elu", "thresholded_relu", "linear_activation",
        "scaled_tanh", "sigmoid_hard", "clamped_relu", "silu", "softsign", "softplus", "gelu", "fill_like",
    ]

    private static let leadingAxisTypes: Set<String> = [
        "conv", "conv_transpose", "max_pool", "avg_pool", "batch_norm", "instance_norm", "prelu",
        "softplus_parametric", "upsample_nearest_neighbor", "upsample_bilinear", "resize_nearest_neighbor", "crop",
        "pixel_shuffle", "pixel_unshuffle", "depth_to_space", "space_to_depth",
    ]

    private static let reductionTypes: Set<String> = [
        "reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod", "reduce_sum_square",
        "reduce_l1_norm", "reduce_l2_norm", "reduce_log_sum", "reduce_log_sum_exp",
    ]

    private static func decide(_ lowering: OperationLowering) throws -> BatchRule {
        let type = lowering.operation.type
        if elementwiseTypes.contains(type) { return .elementwise }
        if leadingAxisTypes.contains(type) { return .leadingAxis }
        if reductionTypes.contains(type) {
            return .reduction(axes: try lowering.ints("axes"), keepDims: try lowering.bool("keep_dims") ?? false)
        }
        switch type {
        case "reduce_argmax", "reduce_argmin":
            return .reduction(axes: [try lowering.int("axis") ?? -1], keepDims: try lowering.bool("keep_dims") ?? false)
        case "softmax": return .alongAxes([try lowering.int("axis") ?? -1])
        case "layer_norm": return .alongAxes(try lowering.ints("axes"))
        case "l2_norm": return .alongAxes([-3, -2, -1])
        case "local_response_norm": return .alongAxes([-3])
        case "cumsum": return .alongAxes([try lowering.int("axis") ?? 0])
        case "reverse": return .alongAxes(try lowering.ints("axes"))
        case "band_part": return .alongAxes([-2, -1])
        case "transpose": return .transpose(perm: try lowering.required(lowering.ints("perm"), "perm"))
        case "reshape", "reshape_like", "expand_dims", "squeeze", "flatten2d": return .reshape
        case "matmul":
            return .matmul(
                transposeX: try lowering.bool("transpose_x") ?? false,
                transposeY: try lowering.bool("transpose_y") ?? false)
        case "linear": return .linear
        case "scaled_dot_product_attention": return .attention
        case "concat": return .concat(axis: try lowering.required(lowering.int("axis"), "axis"))
        case "stack": return .stack(axis: try lowering.required(lowering.int("axis"), "axis"))
        case "split": return .split(axis: try lowering.required(lowering.int("axis"), "axis"))
        case "tile": return .tile(reps: try lowering.required(lowering.ints("reps"), "reps"))
        case "pad": return .pad(try lowering.required(lowering.ints("pad"), "pad"))
        case "slice_by_index":
            return .slice(strides: try lowering.ints("stride"), squeeze: try lowering.bools("squeeze_mask"))
        case "slice_by_size": return .slice(strides: nil, squeeze: nil)
        case "gather":
            guard (try lowering.int("batch_dims") ?? 0) == 0 else { return .notSeparable }
            return .gather(axis: try lowering.int("axis") ?? 0)
        case "shape": return .shapeOf
        default: return .notSeparable
        }
    }
}
