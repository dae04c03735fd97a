/// Element-wise kernels for small, compact `Float` operands, with no program to build.
///
/// These run the fused interpreter's own per-block bodies (the same vector kernels, the same
/// scalar fallbacks), so an element's result is bit-identical to what a fused program
/// computes for it. The tensor layer uses them to compute tiny element-wise ops as soon as
/// they are built, where building, planning and freeing a graph node would cost a hundred
/// times the arithmetic.
///
/// ```swift
/// // out[i] = a[i] * 1.5 over 16 elements
/// var scale: Float = 1.5
/// ElementwiseKernels.smallBinary(.mul, lhs: a, lhsIsScalar: false, rhs: &scale, rhsIsScalar: true,
///                                output: out, count: 16)
/// ```
extension ElementwiseKernels {
    /// `output[i] = op(lhs[i], rhs[i])` for `i in 0..<count`; an operand marked as a scalar
    /// supplies its one element to every position.
    ///
    /// Any length works; work is cut into the fused interpreter's blocks.
    ///
    /// - Precondition: `op` does not produce booleans (comparisons and logical ops are
    ///   computed by the general ``binary(_:lhs:lhsLayout:rhs:rhsLayout:type:output:)``).
    package static func smallBinary(
        _ op: BinaryOp, lhs: UnsafePointer<Float>, lhsIsScalar: Bool, rhs: UnsafePointer<Float>,
        rhsIsScalar: Bool, output: UnsafeMutablePointer<Float>, count: Int
    ) {
        kernelPrecondition(!op.producesBool, "[\(op)] produces booleans; smallBinary computes Float results only")
        if lhsIsScalar && rhsIsScalar {
            output.update(repeating: Float.apply(op, scalar: lhs.pointee, rhs.pointee), count: count)
            return
        }
        var start = 0
        while start < count {
            let n = Swift.min(FusedProgram.blockSize, count - start)
            let a: BlockOperand<Float> = lhsIsScalar ? .uniform(lhs.pointee) : .block(lhs + start)
            let b: BlockOperand<Float> = rhsIsScalar ? .uniform(rhs.pointee) : .block(rhs + start)
            Float.apply(op, a, b, output + start, n)
            start += n
        }
    }

    /// `output[i] = op(input[i])` for `i in 0..<count`, through the fused interpreter's
    /// per-block bodies.
    ///
    /// ```swift
    /// ElementwiseKernels.smallUnary(.sqrt, input: x, output: out, count: 16)
    /// ```
    package static func smallUnary(
        _ op: UnaryOp, input: UnsafePointer<Float>, output: UnsafeMutablePointer<Float>, count: Int
    ) {
        var start = 0
        while start < count {
            let n = Swift.min(FusedProgram.blockSize, count - start)
            Float.apply(op, input + start, output + start, n)
            start += n
        }
    }
}
