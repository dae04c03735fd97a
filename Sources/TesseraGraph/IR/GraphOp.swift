import TesseraKernels

/// What a graph node computes from its inputs.
///
/// Element-wise ops (`unary`, `binary`, `select`, `cast`) and `broadcast` fuse into one
/// ``FusedProgram`` at execution; view ops (`reshape`, `broadcast`, `permute`, `slice`) change
/// only the layout when their input allows it; the rest map to one kernel each.
package enum GraphOp: Sendable, Hashable, CustomStringConvertible {
    /// A value that exists from the start (user data, a weight, a materialized result).
    case constant
    /// `op(x)`, same shape and type.
    case unary(UnaryOp)
    /// `op(a, b)` with NumPy broadcasting; `bool` result for comparisons and logic.
    case binary(BinaryOp)
    /// `condition ? a : b` with broadcasting; inputs `[condition (bool), a, b]`.
    case select
    /// Conversion to another scalar type.
    case cast(KernelScalarType)
    /// A reduction over `axes` (sorted, non-negative); the result keeps rank (reduced axes 1).
    case reduce(ReductionOp, axes: [Int])
    /// Softmax along a non-negative axis.
    case softmax(axis: Int)
    /// Log-softmax along a non-negative axis.
    case logSoftmax(axis: Int)
    /// Inclusive (or exclusive) cumulative sum or product along an axis.
    case scan(product: Bool, axis: Int, exclusive: Bool, reverse: Bool)
    /// Batched matrix product of two rank ≥ 2 inputs with broadcast batch dimensions.
    case matmul
    /// The same elements in row-major order with a new shape.
    case reshape([Int])
    /// NumPy broadcast to a larger shape (a stride-0 view).
    case broadcast([Int])
    /// Axes reordered: result axis `i` is input axis `permutation[i]`.
    case permute([Int])
    /// A strided window: per axis, a start, a step (non-zero, may be negative) and a count.
    case slice(starts: [Int], steps: [Int], counts: [Int])
    /// Inputs joined along an axis.
    case concat(axis: Int)
    /// Padding per axis `(before, after)` in the given mode.
    case pad(before: [Int], after: [Int], mode: GraphPadMode)
    /// `take(x, indices, axis)`; inputs `[x, indices (int32)]`.
    case gather(axis: Int)
    /// Repetition of the whole tensor along each axis.
    case tile([Int])
    /// 2-D convolution of a float32 NCHW input with an OIHW weight; inputs
    /// `[x, weight]` or `[x, weight, bias]` (bias `[O]`).
    case conv2d(Conv2DParameters)
    /// 2-D max pooling of a float32 NCHW input.
    case maxPool2d(Pool2DParameters)
    /// 2-D average pooling of a float32 NCHW input; `countIncludePad` counts padding
    /// positions in the divisor.
    case averagePool2d(Pool2DParameters, countIncludePad: Bool)
    /// The int32 indices of the first `count` elements of each line along `axis` in sorted
    /// order (stable; NaN above every number); `count` equal to the axis size is `argsort`.
    case argsort(axis: Int, descending: Bool, count: Int)
    /// `take_along_axis(x, indices, axis)`; inputs `[x, indices (int32, same rank)]`.
    case gatherElements(axis: Int)
    /// `gather_nd(x, indices)`; inputs `[x, indices (int32, [..., m])]`.
    case gatherND
    /// `x` with `updates` written at `indices` along `axis`; inputs `[x, indices, updates]`.
    case scatter(axis: Int)
    /// The last two axes resized to `height × width`.
    case resize(height: Int, width: Int, method: ResizeKernelMethod)
    /// `samples` int32 category indices per row drawn from the last axis's weights; inputs
    /// `[weights, seed (uint32 [2], low word first)]`, so plans do not depend on the seed.
    /// `lenient` (for a model's feature values) counts negative or non-finite weights as 0
    /// and gives category 0 to a row with no positive weight, where the strict op traps.
    case multinomial(samples: Int, lenient: Bool)
    /// Greedy NMS; inputs `[boxes (float32 [n, 4]), scores (float32 [n])]`; int32
    /// `[maxOutputCount]` padded with -1.
    case nonMaximumSuppression(iouThreshold: Float, scoreThreshold: Float, maxOutputCount: Int)
    /// A recurrent layer (`rnn`, `gru`, `lstm`) over a whole sequence; inputs `[x (float32
    /// [T, B, I]), initialH ([B, D·H]), initialC (LSTM only), packed weights ([packedCount])]`;
    /// float32 `[S + states, B, D·H]` (``RecurrentParameters``).
    case recurrent(RecurrentParameters)
    /// Scaled dot-product attention as one kernel: `softmax(scale · q · kᵀ + mask) · v`;
    /// inputs `[q [..., L, E], k [..., S, E], v [..., S, Ev]]` or with a float32 additive mask
    /// broadcastable to `[..., L, S]` fourth, all float32; result `[..., L, Ev]`.
    case attention(scale: Float)

    /// Whether the op is applied element by element over its (broadcast) output shape
    /// (its ``rule``'s kind is ``OpKind/elementwise``).
    package var isElementwise: Bool { rule.kind == .elementwise }

    /// Whether the op can be a change of layout alone (its ``rule``'s kind is ``OpKind/view``).
    package var isView: Bool { rule.kind == .view }

    package var description: String {
        switch self {
        case .constant: return "constant"
        case .unary(let op): return "\(op)"
        case .binary(let op): return "\(op)"
        case .select: return "select"
        case .cast(let type): return "cast<\(type)>"
        case .reduce(let op, let axes): return "\(op)\(axes)"
        case .softmax(let axis): return "softmax(\(axis))"
        case .logSoftmax(let axis): return "logSoftmax(\(axis))"
        case .scan(let product, let axis, _, _): return product ? "cumprod(\(axis))" : "cumsum(\(axis))"
        case .matmul: return "matmul"
        case .reshape(let shape): return "reshape\(shape)"
        case .broadcast(let shape): return "broadcast\(shape)"
        case .permute(let p): return "permute\(p)"
        case .slice: return "slice"
        case .concat(let axis): return "concat(\(axis))"
        case .pad: return "pad"
        case .gather(let axis): return "gather(\(axis))"
        case .tile(let m): return "tile\(m)"
        case .conv2d: return "conv2d"
        case .maxPool2d: return "maxPool2d"
        case .averagePool2d: return "averagePool2d"
        case .argsort(let axis, let descending, let count):
            return "argsort(\(axis), \(descending ? "descending" : "ascending"), \(count))"
        case .gatherElements(let axis): return "gatherElements(\(axis))"
        case .gatherND: return "gatherND"
        case .scatter(let axis): return "scatter(\(axis))"
        case .resize(let h, let w, _): return "resize[\(h), \(w)]"
        case .multinomial(let samples, let lenient):
            return lenient ? "multinomial(\(samples), lenient)" : "multinomial(\(samples))"
        case .nonMaximumSuppression: return "nonMaximumSuppression"
        case .recurrent(let p): return "\(p.cell.name)(\(p.direction))"
        case .attention(let scale): return "attention(\(scale))"
        }
    }
}

/// How ``GraphOp/pad(before:after:mode:)`` fills the new elements.
package enum GraphPadMode: Sendable, Hashable {
    /// A constant, given as a `Double` and converted to the tensor's type.
    case constant(Double)
    /// Mirror without repeating the edge (`[3, 2, | 1, 2, 3 | 2, 1]`).
    case reflect
    /// Mirror repeating the edge (`[2, 1, | 1, 2, 3 | 3, 2]`).
    case symmetric
    /// Repeat the edge value.
    case edge
}
