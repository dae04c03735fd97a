import TesseraGraph
import TesseraKernels

extension MLTensor {
    /// A rank-0 constant of `type` holding `value`, converted the way a cast kernel converts
    /// (floats round to nearest, integers truncate toward zero, `Bool` is `value != 0`).
    ///
    /// Recently used constants are shared (they are immutable), so `x * 2` in a loop builds one
    /// constant node, not one per iteration, and the graph it feeds stays small.
    package static func scalarConstant(_ value: Double, type: KernelScalarType) -> MLTensor {
        ScalarConstantCache.shared.constant(value, type: type) {
            MLTensor(shape: [], kernelType: type) { pointer, _ in
                withUnsafeBytes(of: value) { source in
                    ScalarConversion.convert(source.baseAddress!, from: .float64, into: pointer, to: type, count: 1)
                }
            }
        }
    }

    /// `scalar` as a rank-0 constant of this tensor's scalar type, ready to broadcast against it.
    ///
    /// A `Float` operand is held inline (see ``InlineFloats``): no node, no cache lookup.
    package func scalarOperand(_ scalar: some MLTensorScalar) -> MLTensor {
        if kernelType == .float32 { return MLTensor(inline: InlineFloats(scalar: Float(scalar.kernelDoubleValue))) }
        return MLTensor.scalarConstant(scalar.kernelDoubleValue, type: kernelType)
    }

    /// `op(self, other)` with NumPy broadcasting.
    ///
    /// A literal operand (`x * 2` resolving to the tensor-tensor overload) takes the other
    /// operand's scalar type.
    package func binary(_ op: BinaryOp, _ other: MLTensor) -> MLTensor {
        if let result = MLTensor.inlineBinary(op, self, other) { return result }
        var (lhs, rhs) = (self, other)
        if lhs.kernelType != rhs.kernelType {
            if let value = rhs.literal, lhs.literal == nil {
                rhs = MLTensor.scalarConstant(value, type: lhs.kernelType)
            } else if let value = lhs.literal, rhs.literal == nil {
                lhs = MLTensor.scalarConstant(value, type: rhs.kernelType)
            }
        }
        if let same = MLTensor.identityResult(op, lhs, rhs) { return same }
        if let folded = MLTensor.foldedBinary(op, lhs, rhs) { return folded }
        return MLTensor(.binary(op), lhs, rhs)
    }

    /// The value of a rank-0 tensor whose elements exist already (a literal or a scalar
    /// operand), or `nil`.
    private var knownScalar: Double? {
        if let literal { return literal }
        guard shape.isEmpty else { return nil }
        guard let node = storedNode else { return Double(inline.elements[0]) }
        guard let value = node.value else { return nil }
        // Folding on a computed value (an input, say) makes the graph depend on it.
        BuildReads.note(reading: node)
        var result = 0.0
        ScalarConversion.convert(
            value.pointer + value.layout.offset * value.type.byteCount, from: value.type, into: &result,
            to: .float64, count: 1)
        return result
    }

    /// Constant folding at build time: `x * 1`, `1 * x`, `x / 1`, `x ** 1`, `x - 0`, `x + (-0)`
    /// (and `x + 0` for integers) are `x` itself, bit for bit (IEEE: `-0 + 0` is `+0`, so a float
    /// `x + 0` is not folded), so no node is built for them.
    static func identityResult(_ op: BinaryOp, _ lhs: MLTensor, _ rhs: MLTensor) -> MLTensor? {
        guard lhs.kernelType == rhs.kernelType, lhs.kernelType != .bool else { return nil }
        let isFloat = lhs.kernelType.isFloatingPoint
        if rhs.isScalar, let c = rhs.knownScalar, isIdentity(op, c, onTheRight: true, isFloat: isFloat) {
            return lhs
        }
        if lhs.isScalar, let c = lhs.knownScalar, isIdentity(op, c, onTheRight: false, isFloat: isFloat) {
            return rhs
        }
        return nil
    }

    /// Whether `x op c` (`onTheRight`) or `c op x` is `x` itself for every `x`: multiplying by
    /// 1, dividing by 1, raising to 1, subtracting +0, adding -0 (any zero for integers).
    @inline(__always)
    static func isIdentity(_ op: BinaryOp, _ c: Double, onTheRight: Bool, isFloat: Bool) -> Bool {
        let isAdditiveIdentity = isFloat ? c.bitPattern == (-0.0).bitPattern : c == 0
        switch op {
        case .mul: return c == 1
        case .add: return isAdditiveIdentity
        case .div, .pow: return onTheRight && c == 1
        case .sub: return onTheRight && c == 0 && (!isFloat || c.sign == .plus)
        default: return false
        }
    }

    /// `op(self)`, element by element.
    package func unary(_ op: UnaryOp) -> MLTensor {
        foldedUnary(op) ?? MLTensor(.unary(op), [self])
    }
}

// MARK: - Addition

extension MLTensor {
    /// Adds two tensors element by element.
    ///
    /// The shapes must be broadcastable (NumPy rules); the result has the broadcast shape and
    /// the operands' scalar type. Integer addition wraps on overflow.
    ///
    /// ```swift
    /// let a = MLTensor(shape: [2, 2], scalars: [1, 2, 3, 4])
    /// let b = MLTensor([10, 20] as [Float])
    /// let c = a + b   // [[11, 22], [13, 24]]
    /// ```
    ///
    /// - Precondition: Both tensors have the same numeric (non-`Bool`) scalar type and
    ///   broadcastable shapes; otherwise the call traps, naming `add` and the shapes.
    public static func + (lhs: consuming MLTensor, rhs: MLTensor) -> MLTensor {
        MLTensor.arithmetic(.add, lhs, rhs)
    }

    /// Adds a scalar to every element of a tensor.
    ///
    /// The scalar is converted to the tensor's scalar type first (`Int32` tensor `+ 1.5`
    /// adds 1); the result has the tensor's shape and scalar type.
    ///
    /// ```swift
    /// let y = MLTensor([1, 2] as [Float]) + Float(0.5)   // [1.5, 2.5]
    /// ```
    ///
    /// - Precondition: The tensor's scalar type is not `Bool`.
    public static func + (lhs: consuming MLTensor, rhs: some MLTensorScalar & Numeric) -> MLTensor {
        let scalar = lhs.scalarOperand(rhs)
        return MLTensor.arithmetic(.add, lhs, scalar)
    }

    /// Adds a tensor to a scalar, element by element.
    ///
    /// The scalar is converted to the tensor's scalar type; the result has the tensor's shape
    /// and scalar type.
    ///
    /// ```swift
    /// let y = Float(1) + MLTensor([1, 2] as [Float])   // [2, 3]
    /// ```
    ///
    /// - Precondition: The tensor's scalar type is not `Bool`.
    public static func + (lhs: some MLTensorScalar & Numeric, rhs: MLTensor) -> MLTensor {
        rhs.scalarOperand(lhs).binary(.add, rhs)
    }

    /// Adds `rhs` to `lhs` and stores the result in `lhs` (a new lazy tensor).
    ///
    /// Broadcasting follows `+`, so `lhs` takes the broadcast shape.
    ///
    /// ```swift
    /// var total = MLTensor(zeros: [3], scalarType: Float.self)
    /// total += MLTensor([1, 2, 3] as [Float])
    /// ```
    ///
    /// - Precondition: Same as `+`.
    public static func += (lhs: inout MLTensor, rhs: MLTensor) {
        lhs = lhs + rhs
    }
}

// MARK: - Subtraction and negation

extension MLTensor {
    /// Subtracts `rhs` from `lhs` element by element.
    ///
    /// The shapes must be broadcastable; the result has the broadcast shape and the operands'
    /// scalar type. Integer subtraction wraps (including below zero for unsigned types).
    ///
    /// ```swift
    /// let d = MLTensor([5, 7] as [Float]) - MLTensor([1, 2] as [Float])   // [4, 5]
    /// ```
    ///
    /// - Precondition: Same numeric (non-`Bool`) scalar type, broadcastable shapes.
    public static func - (lhs: consuming MLTensor, rhs: MLTensor) -> MLTensor {
        MLTensor.arithmetic(.sub, lhs, rhs)
    }

    /// Subtracts a scalar from every element.
    ///
    /// The scalar is converted to the tensor's scalar type first.
    ///
    /// ```swift
    /// let y = MLTensor([1, 2] as [Float]) - Float(1)   // [0, 1]
    /// ```
    ///
    /// - Precondition: The tensor's scalar type is not `Bool`.
    public static func - (lhs: consuming MLTensor, rhs: some MLTensorScalar & Numeric) -> MLTensor {
        let scalar = lhs.scalarOperand(rhs)
        return MLTensor.arithmetic(.sub, lhs, scalar)
    }

    /// Subtracts every element of a tensor from a scalar.
    ///
    /// The scalar is converted to the tensor's scalar type first.
    ///
    /// ```swift
    /// let y = Float(1) - MLTensor([1, 2] as [Float])   // [0, -1]
    /// ```
    ///
    /// - Precondition: The tensor's scalar type is not `Bool`.
    public static func - (lhs: some MLTensorScalar & Numeric, rhs: MLTensor) -> MLTensor {
        rhs.scalarOperand(lhs).binary(.sub, rhs)
    }

    /// Subtracts `rhs` from `lhs` and stores the result in `lhs`.
    ///
    /// ```swift
    /// var x = MLTensor([3, 4] as [Float])
    /// x -= MLTensor([1, 1] as [Float])   // [2, 3]
    /// ```
    ///
    /// - Precondition: Same as `-`.
    public static func -= (lhs: inout MLTensor, rhs: MLTensor) {
        lhs = lhs - rhs
    }

    /// Negates every element.
    ///
    /// Same shape and scalar type; unsigned integers wrap (`-1` as `UInt8` is 255).
    ///
    /// ```swift
    /// let y = -MLTensor([1, -2] as [Float])   // [-1, 2]
    /// ```
    ///
    /// - Precondition: The scalar type is not `Bool`.
    public static prefix func - (rhs: MLTensor) -> MLTensor {
        rhs.unary(.neg)
    }
}

// MARK: - Multiplication

extension MLTensor {
    /// Multiplies two tensors element by element (not a matrix product; see `matmul(_:)`).
    ///
    /// The shapes must be broadcastable; the result has the broadcast shape and the operands'
    /// scalar type. Integer multiplication wraps.
    ///
    /// ```swift
    /// let p = MLTensor([1, 2] as [Float]) * MLTensor([3, 4] as [Float])   // [3, 8]
    /// ```
    ///
    /// - Precondition: Same numeric (non-`Bool`) scalar type, broadcastable shapes.
    public static func * (lhs: consuming MLTensor, rhs: MLTensor) -> MLTensor {
        MLTensor.arithmetic(.mul, lhs, rhs)
    }

    /// Multiplies every element by a scalar.
    ///
    /// The scalar is converted to the tensor's scalar type first, so `floatTensor * 0.5`
    /// scales a `Float` tensor and stays `Float`.
    ///
    /// ```swift
    /// let y = MLTensor([1, 2] as [Float]) * 0.5   // [0.5, 1]
    /// ```
    ///
    /// - Precondition: The tensor's scalar type is not `Bool`.
    public static func * (lhs: consuming MLTensor, rhs: some MLTensorScalar & Numeric) -> MLTensor {
        let scalar = lhs.scalarOperand(rhs)
        return MLTensor.arithmetic(.mul, lhs, scalar)
    }

    /// Multiplies a scalar by every element of a tensor.
    ///
    /// The scalar is converted to the tensor's scalar type first.
    ///
    /// ```swift
    /// let y = Float(2) * MLTensor([1, 2] as [Float])   // [2, 4]
    /// ```
    ///
    /// - Precondition: The tensor's scalar type is not `Bool`.
    public static func * (lhs: some MLTensorScalar & Numeric, rhs: MLTensor) -> MLTensor {
        rhs.scalarOperand(lhs).binary(.mul, rhs)
    }

    /// Multiplies `lhs` by `rhs` element by element and stores the result in `lhs`.
    ///
    /// ```swift
    /// var x = MLTensor([1, 2] as [Float])
    /// x *= MLTensor([3, 3] as [Float])   // [3, 6]
    /// ```
    ///
    /// - Precondition: Same as `*`.
    public static func *= (lhs: inout MLTensor, rhs: MLTensor) {
        lhs = lhs * rhs
    }
}

// MARK: - Division and remainder

extension MLTensor {
    /// Divides `lhs` by `rhs` element by element.
    ///
    /// The shapes must be broadcastable; the result has the broadcast shape and the operands'
    /// scalar type. Floats follow IEEE 754 (`1 / 0` is `inf`); integers truncate toward zero
    /// and give 0 for a zero divisor instead of trapping.
    ///
    /// ```swift
    /// let q = MLTensor([1, 3] as [Float]) / MLTensor([2, 2] as [Float])   // [0.5, 1.5]
    /// ```
    ///
    /// - Precondition: Same numeric (non-`Bool`) scalar type, broadcastable shapes.
    public static func / (lhs: consuming MLTensor, rhs: MLTensor) -> MLTensor {
        MLTensor.arithmetic(.div, lhs, rhs)
    }

    /// Divides every element by a scalar.
    ///
    /// The scalar is converted to the tensor's scalar type first.
    ///
    /// ```swift
    /// let y = MLTensor([1, 2] as [Float]) / Float(2)   // [0.5, 1]
    /// ```
    ///
    /// - Precondition: The tensor's scalar type is not `Bool`.
    public static func / (lhs: consuming MLTensor, rhs: some MLTensorScalar & Numeric) -> MLTensor {
        let scalar = lhs.scalarOperand(rhs)
        return MLTensor.arithmetic(.div, lhs, scalar)
    }

    /// Divides a scalar by every element of a tensor.
    ///
    /// The scalar is converted to the tensor's scalar type first.
    ///
    /// ```swift
    /// let y = Float(1) / MLTensor([2, 4] as [Float])   // [0.5, 0.25]
    /// ```
    ///
    /// - Precondition: The tensor's scalar type is not `Bool`.
    public static func / (lhs: some MLTensorScalar & Numeric, rhs: MLTensor) -> MLTensor {
        rhs.scalarOperand(lhs).binary(.div, rhs)
    }

    /// Divides `lhs` by `rhs` element by element and stores the result in `lhs`.
    ///
    /// ```swift
    /// var x = MLTensor([2, 4] as [Float])
    /// x /= MLTensor([2, 2] as [Float])   // [1, 2]
    /// ```
    ///
    /// - Precondition: Same as `/`.
    public static func /= (lhs: inout MLTensor, rhs: MLTensor) {
        lhs = lhs / rhs
    }

    /// The remainder of dividing `lhs` by `rhs`, element by element.
    ///
    /// Floored, as NumPy's `mod` and Python's `%`: the result takes the sign of the divisor
    /// (`-7 % 3` is 2). Integer remainders by 0 give 0. The shapes must be broadcastable; the
    /// result has the broadcast shape and the operands' scalar type.
    ///
    /// ```swift
    /// let r = MLTensor([7, -7] as [Float]) % MLTensor([3, 3] as [Float])   // [1, 2]
    /// ```
    ///
    /// - Precondition: Same numeric (non-`Bool`) scalar type, broadcastable shapes.
    public static func % (lhs: MLTensor, rhs: MLTensor) -> MLTensor {
        lhs.binary(.remainder, rhs)
    }

    /// The remainder of dividing every element by a scalar (floored, like `%` on tensors).
    ///
    /// ```swift
    /// let r = MLTensor([5, 6] as [Int32]) % Int32(4)   // [1, 2]
    /// ```
    ///
    /// - Precondition: The tensor's scalar type is not `Bool`.
    public static func % (lhs: MLTensor, rhs: some MLTensorScalar & Numeric) -> MLTensor {
        lhs.binary(.remainder, lhs.scalarOperand(rhs))
    }

    /// The remainder of dividing a scalar by every element of a tensor (floored).
    ///
    /// ```swift
    /// let r = Float(5) % MLTensor([2, 3] as [Float])   // [1, 2]
    /// ```
    ///
    /// - Precondition: The tensor's scalar type is not `Bool`.
    public static func % (lhs: some MLTensorScalar & Numeric, rhs: MLTensor) -> MLTensor {
        rhs.scalarOperand(lhs).binary(.remainder, rhs)
    }

    /// Replaces `lhs` with the floored remainder of `lhs` divided by `rhs`.
    ///
    /// ```swift
    /// var x = MLTensor([5, 6] as [Float])
    /// x %= MLTensor([4, 4] as [Float])   // [1, 2]
    /// ```
    ///
    /// - Precondition: Same as `%`.
    public static func %= (lhs: inout MLTensor, rhs: MLTensor) {
        lhs = lhs % rhs
    }
}
