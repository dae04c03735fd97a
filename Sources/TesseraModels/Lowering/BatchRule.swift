/// How one lowered operation treats a batch axis: what lets a batch of predictions run as one
/// execution (items concatenated along axis 0) and give each item the result it would get alone.
///
/// Decided at load by the op's registration (``MILOp``'s ``MILOpBatching``) from its
/// constant parameters; checked per batched run against the operands' batch axes and the
/// concrete shapes (`LoweredFunction+Batching.swift`). Operand positions are those the op's
/// lowering registered, in order (`x` first for every op that has one).
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
}
