import TesseraGraph
import TesseraKernels

// The operators `.==`, `.!=`, `.<`, `.<=`, `.>`, `.>=`, `.&`, `.|`, `.^` and `.!` are declared by
// the standard library (for SIMD); these are MLTensor overloads of them.

extension MLTensor {
    /// Whether every operand of a logical operator is a `Bool` tensor; traps otherwise (inside
    /// ``withShapeChecks(_:)``: records that and returns `false`).
    private static func checkBool(_ tensors: MLTensor..., op: String) -> Bool {
        for tensor in tensors {
            guard
                check(
                    tensor.kernelType == .bool,
                    "[\(op)] needs bool tensors, got \(tensors.map { "\($0.kernelType) \($0.shape)" }.joined(separator: " vs "))"
                )
            else { return false }
        }
        return true
    }

    /// Compares two tensors for equality element by element.
    ///
    /// The shapes must be broadcastable; the result is a `Bool` tensor of the broadcast shape.
    ///
    /// ```swift
    /// let m = MLTensor([1, 2, 3] as [Float]) .== MLTensor([1, 0, 3] as [Float])   // [true, false, true]
    /// ```
    ///
    /// - Precondition: Both tensors have the same scalar type and broadcastable shapes.
    public static func .== (lhs: MLTensor, rhs: MLTensor) -> MLTensor {
        lhs.binary(.equal, rhs)
    }

    /// Compares every element with a scalar for equality.
    ///
    /// The scalar is converted to the tensor's scalar type first; the result is a `Bool`
    /// tensor of the tensor's shape.
    ///
    /// ```swift
    /// let m = MLTensor([1, 2] as [Float]) .== Float(2)   // [false, true]
    /// ```
    public static func .== (lhs: MLTensor, rhs: some MLTensorScalar & Numeric) -> MLTensor {
        lhs.binary(.equal, lhs.scalarOperand(rhs))
    }

    /// Compares two tensors for inequality element by element (`Bool` result, broadcast shape).
    ///
    /// ```swift
    /// let m = MLTensor([1, 2] as [Float]) .!= MLTensor([1, 0] as [Float])   // [false, true]
    /// ```
    ///
    /// - Precondition: Same scalar type, broadcastable shapes.
    public static func .!= (lhs: MLTensor, rhs: MLTensor) -> MLTensor {
        lhs.binary(.notEqual, rhs)
    }

    /// Compares every element with a scalar for inequality (`Bool` result, the tensor's shape).
    ///
    /// ```swift
    /// let m = MLTensor([1, 2] as [Float]) .!= Float(2)   // [true, false]
    /// ```
    public static func .!= (lhs: MLTensor, rhs: some MLTensorScalar & Numeric) -> MLTensor {
        lhs.binary(.notEqual, lhs.scalarOperand(rhs))
    }

    /// Whether each element of `lhs` is less than the matching element of `rhs`.
    ///
    /// `Bool` result of the broadcast shape; comparisons with NaN are false.
    ///
    /// ```swift
    /// let m = MLTensor([1, 5] as [Float]) .< MLTensor([2, 2] as [Float])   // [true, false]
    /// ```
    ///
    /// - Precondition: Same scalar type, broadcastable shapes.
    public static func .< (lhs: MLTensor, rhs: MLTensor) -> MLTensor {
        lhs.binary(.less, rhs)
    }

    /// Whether each element is less than a scalar (converted to the tensor's scalar type).
    ///
    /// ```swift
    /// let m = MLTensor([1, 5] as [Float]) .< Float(2)   // [true, false]
    /// ```
    public static func .< (lhs: MLTensor, rhs: some MLTensorScalar & Numeric) -> MLTensor {
        lhs.binary(.less, lhs.scalarOperand(rhs))
    }

    /// Whether each element of `lhs` is less than or equal to the matching element of `rhs`.
    ///
    /// `Bool` result of the broadcast shape.
    ///
    /// ```swift
    /// let m = MLTensor([1, 5] as [Float]) .<= MLTensor([1, 2] as [Float])   // [true, false]
    /// ```
    ///
    /// - Precondition: Same scalar type, broadcastable shapes.
    public static func .<= (lhs: MLTensor, rhs: MLTensor) -> MLTensor {
        lhs.binary(.lessEqual, rhs)
    }

    /// Whether each element is less than or equal to a scalar (converted to the tensor's type).
    ///
    /// ```swift
    /// let m = MLTensor([1, 5] as [Float]) .<= Float(1)   // [true, false]
    /// ```
    public static func .<= (lhs: MLTensor, rhs: some MLTensorScalar & Numeric) -> MLTensor {
        lhs.binary(.lessEqual, lhs.scalarOperand(rhs))
    }

    /// Whether each element of `lhs` is greater than the matching element of `rhs`.
    ///
    /// `Bool` result of the broadcast shape.
    ///
    /// ```swift
    /// let m = MLTensor([1, 5] as [Float]) .> MLTensor([2, 2] as [Float])   // [false, true]
    /// ```
    ///
    /// - Precondition: Same scalar type, broadcastable shapes.
    public static func .> (lhs: MLTensor, rhs: MLTensor) -> MLTensor {
        lhs.binary(.greater, rhs)
    }

    /// Whether each element is greater than a scalar (converted to the tensor's scalar type).
    ///
    /// ```swift
    /// let m = MLTensor([1, 5] as [Float]) .> Float(2)   // [false, true]
    /// ```
    public static func .> (lhs: MLTensor, rhs: some MLTensorScalar & Numeric) -> MLTensor {
        lhs.binary(.greater, lhs.scalarOperand(rhs))
    }

    /// Whether each element of `lhs` is greater than or equal to the matching element of `rhs`.
    ///
    /// `Bool` result of the broadcast shape.
    ///
    /// ```swift
    /// let m = MLTensor([1, 5] as [Float]) .>= MLTensor([1, 9] as [Float])   // [true, false]
    /// ```
    ///
    /// - Precondition: Same scalar type, broadcastable shapes.
    public static func .>= (lhs: MLTensor, rhs: MLTensor) -> MLTensor {
        lhs.binary(.greaterEqual, rhs)
    }

    /// Whether each element is greater than or equal to a scalar (converted to the tensor's type).
    ///
    /// ```swift
    /// let m = MLTensor([1, 5] as [Float]) .>= Float(5)   // [false, true]
    /// ```
    public static func .>= (lhs: MLTensor, rhs: some MLTensorScalar & Numeric) -> MLTensor {
        lhs.binary(.greaterEqual, lhs.scalarOperand(rhs))
    }

    /// Logical AND of two `Bool` tensors, element by element (broadcast shape).
    ///
    /// ```swift
    /// let a = MLTensor([true, true] as [Bool], scalarType: Bool.self)
    /// let b = MLTensor([true, false] as [Bool], scalarType: Bool.self)
    /// let c = a .& b   // [true, false]
    /// ```
    ///
    /// - Precondition: Both tensors are `Bool` tensors with broadcastable shapes.
    public static func .& (lhs: MLTensor, rhs: MLTensor) -> MLTensor {
        guard checkBool(lhs, rhs, op: "logicalAnd") else { return .placeholder(shape: lhs.shape, type: .bool) }
        return lhs.binary(.logicalAnd, rhs)
    }

    /// Logical OR of two `Bool` tensors, element by element (broadcast shape).
    ///
    /// ```swift
    /// let c = (x .< 0) .| (x .> 1)   // outside [0, 1]
    /// ```
    ///
    /// - Precondition: Both tensors are `Bool` tensors with broadcastable shapes.
    public static func .| (lhs: MLTensor, rhs: MLTensor) -> MLTensor {
        guard checkBool(lhs, rhs, op: "logicalOr") else { return .placeholder(shape: lhs.shape, type: .bool) }
        return lhs.binary(.logicalOr, rhs)
    }

    /// Logical exclusive OR of two `Bool` tensors, element by element (broadcast shape).
    ///
    /// ```swift
    /// let c = a .^ b   // true where exactly one is true
    /// ```
    ///
    /// - Precondition: Both tensors are `Bool` tensors with broadcastable shapes.
    public static func .^ (lhs: MLTensor, rhs: MLTensor) -> MLTensor {
        guard checkBool(lhs, rhs, op: "logicalXor") else { return .placeholder(shape: lhs.shape, type: .bool) }
        return lhs.binary(.logicalXor, rhs)
    }

    /// Logical NOT of a `Bool` tensor, element by element (same shape).
    ///
    /// ```swift
    /// let outside = .!(x .>= 0)
    /// ```
    ///
    /// - Precondition: The tensor is a `Bool` tensor.
    public static prefix func .! (rhs: MLTensor) -> MLTensor {
        guard checkBool(rhs, op: "logicalNot") else { return .placeholder(shape: rhs.shape, type: .bool) }
        return rhs.binary(.equal, scalarConstant(0, type: .bool))
    }
}
