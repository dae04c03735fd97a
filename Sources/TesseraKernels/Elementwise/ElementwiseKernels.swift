/// Stand-alone element-wise kernels: one op over strided, broadcast operands into a
/// contiguous result.
///
/// Each call is a one-instruction ``FusedProgram``, so it shares the fused interpreter's
/// layout handling (dimension collapsing; contiguous operands read in place; scalar-broadcast
/// operands held in a register; strided operands gathered a block at a time) and its SIMD
/// bodies.
///
/// Scalar types: every op works on `float32`, `float16` (computed in float32) and `float64`;
/// integer types take the ops their `isDefinedForIntegers` / arithmetic allows (`uint32`
/// computes division, remainder, power, ordering and min/max in float64 so values ≥ 2³¹ stay
/// right); `bool` takes comparisons, logic, min and max.
///
/// ```swift
/// // out[i, j] = a[i, j] + b[j]
/// ElementwiseKernels.binary(.add, lhs: a, lhsLayout: StridedLayout(contiguous: [4, 3]),
///                           rhs: b, rhsLayout: StridedLayout(contiguous: [3]),
///                           type: .float32, output: out)
/// ```
package enum ElementwiseKernels {
    /// Applies `op` to every element of `input` and writes the results contiguously in
    /// `layout.shape`, with the input's type.
    ///
    /// - Precondition: `op` is defined for `type` (see ``UnaryOp/isDefinedForIntegers``;
    ///   nothing is defined for `bool`).
    package static func unary(
        _ op: UnaryOp, input: UnsafeRawPointer, layout: StridedLayout, type: KernelScalarType,
        output: UnsafeMutableRawPointer
    ) {
        kernelPrecondition(
            type.isFloatingPoint || (type.isInteger && op.isDefinedForIntegers),
            "[\(op)] is not defined for \(type) operands (shape \(layout.shape))")
        let program = FusedProgram(
            computeType: FusedProgram.ComputeType(for: type), instructions: [.input(0), .unary(op, 0)], outputs: [1])
        program.run(
            shape: layout.shape, inputs: [FusedInput(pointer: input, layout: layout, type: type)],
            outputs: [FusedOutput(pointer: output, type: type)])
    }

    /// Applies `op` to `lhs` and `rhs` broadcast against each other (NumPy rules) and writes
    /// the result contiguously in the broadcast shape.
    ///
    /// The result type is `bool` for comparisons and logical ops, `type` otherwise.
    ///
    /// - Precondition: the shapes broadcast, and `op` is defined for `type`.
    package static func binary(
        _ op: BinaryOp, lhs: UnsafeRawPointer, lhsLayout: StridedLayout, rhs: UnsafeRawPointer,
        rhsLayout: StridedLayout, type: KernelScalarType, output: UnsafeMutableRawPointer
    ) {
        guard let shape = StridedLayout.broadcastShape(lhsLayout.shape, rhsLayout.shape) else {
            kernelFailure("[\(op)] shapes \(lhsLayout.shape) and \(rhsLayout.shape) do not broadcast")
        }
        kernelPrecondition(type != .bool || op.isDefinedForBool, "[\(op)] is not defined for bool operands")
        let program = FusedProgram(
            computeType: computeType(for: op, type), instructions: [.input(0), .input(1), .binary(op, 0, 1)],
            outputs: [2])
        program.run(
            shape: shape,
            inputs: [
                FusedInput(pointer: lhs, layout: lhsLayout.broadcast(to: shape), type: type),
                FusedInput(pointer: rhs, layout: rhsLayout.broadcast(to: shape), type: type),
            ],
            outputs: [FusedOutput(pointer: output, type: op.producesBool ? .bool : type)])
    }

    /// Converts every element of `input` from `sourceType` to `destinationType` (the rules of
    /// ``ScalarConversion``) and writes them contiguously in `layout.shape`.
    package static func cast(
        input: UnsafeRawPointer, layout: StridedLayout, from sourceType: KernelScalarType,
        output: UnsafeMutableRawPointer, to destinationType: KernelScalarType
    ) {
        if layout.isContiguous {
            ScalarConversion.convert(
                input + layout.offset * sourceType.byteCount, from: sourceType, into: output, to: destinationType,
                count: layout.count)
            return
        }
        // Gather in the wider of the two compute types, then store as the destination type.
        let compute =
            sourceType == .float64 || destinationType == .float64
            ? FusedProgram.ComputeType.float64 : FusedProgram.ComputeType(for: sourceType)
        let program = FusedProgram(computeType: compute, instructions: [.input(0)], outputs: [0])
        program.run(
            shape: layout.shape, inputs: [FusedInput(pointer: input, layout: layout, type: sourceType)],
            outputs: [FusedOutput(pointer: output, type: destinationType)])
    }

    /// `condition ? a : b` element by element, all three broadcast together; the result has
    /// `type` and the broadcast shape.
    ///
    /// - Precondition: the three shapes broadcast. `condition` is read as `bool`.
    package static func select(
        condition: UnsafeRawPointer, conditionLayout: StridedLayout, a: UnsafeRawPointer, aLayout: StridedLayout,
        b: UnsafeRawPointer, bLayout: StridedLayout, type: KernelScalarType, output: UnsafeMutableRawPointer
    ) {
        guard let ab = StridedLayout.broadcastShape(aLayout.shape, bLayout.shape),
            let shape = StridedLayout.broadcastShape(conditionLayout.shape, ab)
        else {
            kernelFailure(
                "[select] shapes \(conditionLayout.shape), \(aLayout.shape) and \(bLayout.shape) do not broadcast")
        }
        let compute = FusedProgram.ComputeType(for: type)
        let program = FusedProgram(
            computeType: compute,
            instructions: [.input(0), .input(1), .input(2), .select(condition: 0, 1, 2)], outputs: [3])
        program.run(
            shape: shape,
            inputs: [
                FusedInput(pointer: condition, layout: conditionLayout.broadcast(to: shape), type: .bool),
                FusedInput(pointer: a, layout: aLayout.broadcast(to: shape), type: type),
                FusedInput(pointer: b, layout: bLayout.broadcast(to: shape), type: type),
            ],
            outputs: [FusedOutput(pointer: output, type: type)])
    }

    /// The compute type for a binary op on `type`: `uint32` leaves int32 for the ops where
    /// two's-complement wrapping would change the answer.
    package static func computeType(for op: BinaryOp, _ type: KernelScalarType) -> FusedProgram.ComputeType {
        if type == .uint32 {
            switch op {
            case .add, .sub, .mul, .equal, .notEqual, .logicalAnd, .logicalOr, .logicalXor: return .int32
            default: return .float64
            }
        }
        return FusedProgram.ComputeType(for: type)
    }
}
