/// A type the fused interpreter computes in: `Float` (for float16, float32 programs),
/// `Double` (float64) and `Int32` (integer and bool programs).
///
/// Each conformance supplies the block bodies for every op it supports; the interpreter and
/// the stand-alone element-wise kernels both call them, so there is one implementation of each
/// op per compute type.
@usableFromInline
protocol FusedComputeScalar: ConvertibleScalar, SIMDScalar, Hashable, Codable {
    /// The interpreter's tag for the type.
    static var computeType: FusedProgram.ComputeType { get }
    /// Whether `op` is implemented for this compute type.
    static func supports(_ op: UnaryOp) -> Bool
    /// `dst[i] = op(src[i])`.
    static func apply(_ op: UnaryOp, _ src: UnsafePointer<Self>, _ dst: UnsafeMutablePointer<Self>, _ n: Int)
    /// `dst[i] = op(a[i], b[i])`; comparisons and logic give 1 or 0.
    static func apply(
        _ op: BinaryOp, _ a: BlockOperand<Self>, _ b: BlockOperand<Self>, _ dst: UnsafeMutablePointer<Self>, _ n: Int)
    /// Two of `+ - * /` with scalar operands in one pass over a block: `t = p[i] op1 s1`
    /// (`s1 op1 p[i]` unless `left1`), then `dst[i] = t op2 s2` (`s2 op2 t` unless `left2`), each
    /// rounded as when `t` is stored between them; `false` when the type has no such kernel (the
    /// caller then runs the two ops one after the other). `dst` may be `p`.
    static func binaryPair(
        _ op1: BinaryOp, left1: Bool, _ s1: Self, _ op2: BinaryOp, left2: Bool, _ s2: Self, _ p: UnsafePointer<Self>,
        _ dst: UnsafeMutablePointer<Self>, _ n: Int
    ) -> Bool
    /// `dst[i] = cond[i] != 0 ? a[i] : b[i]`.
    static func select(
        _ cond: UnsafePointer<Self>, _ a: UnsafePointer<Self>, _ b: UnsafePointer<Self>,
        _ dst: UnsafeMutablePointer<Self>, _ n: Int)
}

extension FusedComputeScalar {
    /// No two-op kernel: the caller runs the ops one after the other.
    @usableFromInline
    static func binaryPair(
        _ op1: BinaryOp, left1: Bool, _ s1: Self, _ op2: BinaryOp, left2: Bool, _ s2: Self, _ p: UnsafePointer<Self>,
        _ dst: UnsafeMutablePointer<Self>, _ n: Int
    ) -> Bool { false }

    /// Applies a unary op to one value, through the same body as a block.
    @inline(__always)
    static func apply(_ op: UnaryOp, scalar x: Self) -> Self {
        var input = x
        var output = x
        apply(op, &input, &output, 1)
        return output
    }

    /// Applies a binary op to two values, through the same body as a block.
    @inline(__always)
    static func apply(_ op: BinaryOp, scalar x: Self, _ y: Self) -> Self {
        var output = x
        apply(op, .uniform(x), .uniform(y), &output, 1)
        return output
    }

    /// Rounds `x` through `type` and back, as storing and reloading would.
    @inline(__always)
    static func roundTrip(_ x: Self, through type: KernelScalarType) -> Self {
        switch type {
        case .float32: return converting(Float.converting(x))
        case .float16: return converting(Float16.converting(x))
        case .float64: return converting(Double.converting(x))
        case .int32: return converting(Int32.converting(x))
        case .int8: return converting(Int8.converting(x))
        case .uint8: return converting(UInt8.converting(x))
        case .int16: return converting(Int16.converting(x))
        case .uint16: return converting(UInt16.converting(x))
        case .uint32: return converting(UInt32.converting(x))
        case .bool: return converting(Bool.converting(x))
        }
    }
}
