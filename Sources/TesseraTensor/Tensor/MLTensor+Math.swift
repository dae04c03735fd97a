import TesseraGraph
import TesseraKernels

// MARK: - Element-wise functions

extension MLTensor {
    /// Returns the absolute value of each element.
    ///
    /// Same shape and scalar type. Integer and floating-point scalar types; the most negative integer stays itself (wraps, as NumPy).
    ///
    /// ```swift
    /// MLTensor([-1, 2] as [Float]).abs()   // [1, 2]
    /// ```
    ///
    /// - Precondition: The scalar type is not `Bool`.
    public func abs() -> MLTensor {
        unary(.abs)
    }

    /// Returns the sign of each element: -1, 0 or 1 (NaN stays NaN).
    ///
    /// Same shape and scalar type. Integer and floating-point scalar types.
    ///
    /// ```swift
    /// MLTensor([-3, 0, 2] as [Float]).sign()   // [-1, 0, 1]
    /// ```
    ///
    /// - Precondition: The scalar type is not `Bool`.
    public func sign() -> MLTensor {
        unary(.sign)
    }

    /// Returns each element rounded up to an integral value.
    ///
    /// Same shape and scalar type. Floating-point types; an integer tensor is returned unchanged.
    ///
    /// ```swift
    /// MLTensor([1.2, -1.2] as [Float]).ceil()   // [2, -1]
    /// ```
    ///
    /// - Precondition: The scalar type is not `Bool`.
    public func ceil() -> MLTensor {
        kernelType.isInteger ? self : unary(.ceil)
    }

    /// Returns each element rounded down to an integral value.
    ///
    /// Same shape and scalar type. Floating-point types; an integer tensor is returned unchanged.
    ///
    /// ```swift
    /// MLTensor([1.8, -1.2] as [Float]).floor()   // [1, -2]
    /// ```
    ///
    /// - Precondition: The scalar type is not `Bool`.
    public func floor() -> MLTensor {
        kernelType.isInteger ? self : unary(.floor)
    }

    /// Returns each element rounded to the nearest integral value, halves to even (as NumPy).
    ///
    /// Same shape and scalar type. Floating-point types; an integer tensor is returned unchanged.
    ///
    /// ```swift
    /// MLTensor([0.5, 1.5, 2.4] as [Float]).round()   // [0, 2, 2]
    /// ```
    ///
    /// - Precondition: The scalar type is not `Bool`.
    public func round() -> MLTensor {
        kernelType.isInteger ? self : unary(.round)
    }

    /// Returns e raised to each element.
    ///
    /// Same shape and scalar type. Floating-point types only.
    ///
    /// ```swift
    /// MLTensor([0, 1] as [Float]).exp()   // [1, 2.718]
    /// ```
    ///
    /// - Precondition: The scalar type is a floating-point type; otherwise the call traps.
    public func exp() -> MLTensor {
        unary(.exp)
    }

    /// Returns 2 raised to each element.
    ///
    /// Same shape and scalar type. Floating-point types only.
    ///
    /// ```swift
    /// MLTensor([3] as [Float]).exp2()   // [8]
    /// ```
    ///
    /// - Precondition: The scalar type is a floating-point type; otherwise the call traps.
    public func exp2() -> MLTensor {
        unary(.exp2)
    }

    /// Returns the natural logarithm of each element (`-inf` at 0, NaN below).
    ///
    /// Same shape and scalar type. Floating-point types only.
    ///
    /// ```swift
    /// MLTensor([1] as [Float]).log()   // [0]
    /// ```
    ///
    /// - Precondition: The scalar type is a floating-point type; otherwise the call traps.
    public func log() -> MLTensor {
        unary(.log)
    }

    /// Returns the square root of each element (NaN below 0).
    ///
    /// Same shape and scalar type. Floating-point types only.
    ///
    /// ```swift
    /// MLTensor([4, 9] as [Float]).squareRoot()   // [2, 3]
    /// ```
    ///
    /// - Precondition: The scalar type is a floating-point type; otherwise the call traps.
    public func squareRoot() -> MLTensor {
        unary(.sqrt)
    }

    /// Returns the reciprocal square root `1 / sqrt(x)` of each element (`+inf` at 0).
    ///
    /// Same shape and scalar type. Floating-point types only.
    ///
    /// ```swift
    /// MLTensor([4] as [Float]).rsqrt()   // [0.5]
    /// ```
    ///
    /// - Precondition: The scalar type is a floating-point type; otherwise the call traps.
    public func rsqrt() -> MLTensor {
        unary(.rsqrt)
    }

    /// Returns each element multiplied by itself.
    ///
    /// Same shape and scalar type. Integer (wrapping) and floating-point scalar types.
    ///
    /// ```swift
    /// MLTensor([-3] as [Float]).squared()   // [9]
    /// ```
    ///
    /// - Precondition: The scalar type is not `Bool`.
    public func squared() -> MLTensor {
        unary(.square)
    }

    /// Returns the reciprocal `1 / x` of each element.
    ///
    /// Same shape and scalar type. Floating-point types only.
    ///
    /// ```swift
    /// MLTensor([4] as [Float]).reciprocal()   // [0.25]
    /// ```
    ///
    /// - Precondition: The scalar type is a floating-point type; otherwise the call traps.
    public func reciprocal() -> MLTensor {
        unary(.reciprocal)
    }

    /// Returns the sine of each element (radians).
    ///
    /// Same shape and scalar type. Floating-point types only.
    ///
    /// ```swift
    /// MLTensor([0] as [Float]).sin()   // [0]
    /// ```
    ///
    /// - Precondition: The scalar type is a floating-point type; otherwise the call traps.
    public func sin() -> MLTensor {
        unary(.sin)
    }

    /// Returns the cosine of each element (radians).
    ///
    /// Same shape and scalar type. Floating-point types only.
    ///
    /// ```swift
    /// MLTensor([0] as [Float]).cos()   // [1]
    /// ```
    ///
    /// - Precondition: The scalar type is a floating-point type; otherwise the call traps.
    public func cos() -> MLTensor {
        unary(.cos)
    }

    /// Returns the tangent of each element (radians).
    ///
    /// Same shape and scalar type. Floating-point types only.
    ///
    /// ```swift
    /// MLTensor([0] as [Float]).tan()   // [0]
    /// ```
    ///
    /// - Precondition: The scalar type is a floating-point type; otherwise the call traps.
    public func tan() -> MLTensor {
        unary(.tan)
    }

    /// Returns the arcsine of each element (NaN outside [-1, 1]).
    ///
    /// Same shape and scalar type. Floating-point types only.
    ///
    /// ```swift
    /// MLTensor([1] as [Float]).asin()   // [1.5708]
    /// ```
    ///
    /// - Precondition: The scalar type is a floating-point type; otherwise the call traps.
    public func asin() -> MLTensor {
        unary(.asin)
    }

    /// Returns the arccosine of each element (NaN outside [-1, 1]).
    ///
    /// Same shape and scalar type. Floating-point types only.
    ///
    /// ```swift
    /// MLTensor([1] as [Float]).acos()   // [0]
    /// ```
    ///
    /// - Precondition: The scalar type is a floating-point type; otherwise the call traps.
    public func acos() -> MLTensor {
        unary(.acos)
    }

    /// Returns the arctangent of each element.
    ///
    /// Same shape and scalar type. Floating-point types only.
    ///
    /// ```swift
    /// MLTensor([1] as [Float]).atan()   // [0.7854]
    /// ```
    ///
    /// - Precondition: The scalar type is a floating-point type; otherwise the call traps.
    public func atan() -> MLTensor {
        unary(.atan)
    }

    /// Returns the hyperbolic sine of each element.
    ///
    /// Same shape and scalar type. Floating-point types only.
    ///
    /// ```swift
    /// MLTensor([0] as [Float]).sinh()   // [0]
    /// ```
    ///
    /// - Precondition: The scalar type is a floating-point type; otherwise the call traps.
    public func sinh() -> MLTensor {
        unary(.sinh)
    }

    /// Returns the hyperbolic cosine of each element.
    ///
    /// Same shape and scalar type. Floating-point types only.
    ///
    /// ```swift
    /// MLTensor([0] as [Float]).cosh()   // [1]
    /// ```
    ///
    /// - Precondition: The scalar type is a floating-point type; otherwise the call traps.
    public func cosh() -> MLTensor {
        unary(.cosh)
    }

    /// Returns the hyperbolic tangent of each element.
    ///
    /// Same shape and scalar type. Floating-point types only.
    ///
    /// ```swift
    /// MLTensor([0] as [Float]).tanh()   // [0]
    /// ```
    ///
    /// - Precondition: The scalar type is a floating-point type; otherwise the call traps.
    public func tanh() -> MLTensor {
        unary(.tanh)
    }

    /// Returns the inverse hyperbolic sine of each element.
    ///
    /// Same shape and scalar type. Floating-point types only.
    ///
    /// ```swift
    /// MLTensor([0] as [Float]).asinh()   // [0]
    /// ```
    ///
    /// - Precondition: The scalar type is a floating-point type; otherwise the call traps.
    public func asinh() -> MLTensor {
        unary(.asinh)
    }

    /// Returns the inverse hyperbolic cosine of each element (NaN below 1).
    ///
    /// Same shape and scalar type. Floating-point types only.
    ///
    /// ```swift
    /// MLTensor([1] as [Float]).acosh()   // [0]
    /// ```
    ///
    /// - Precondition: The scalar type is a floating-point type; otherwise the call traps.
    public func acosh() -> MLTensor {
        unary(.acosh)
    }

    /// Returns the inverse hyperbolic tangent of each element (±inf at ±1).
    ///
    /// Same shape and scalar type. Floating-point types only.
    ///
    /// ```swift
    /// MLTensor([0] as [Float]).atanh()   // [0]
    /// ```
    ///
    /// - Precondition: The scalar type is a floating-point type; otherwise the call traps.
    public func atanh() -> MLTensor {
        unary(.atanh)
    }
}

// MARK: - Power, clamping, minimum and maximum, casts

extension MLTensor {
    /// Raises each element to the power of the matching element of `exponent`.
    ///
    /// The shapes must be broadcastable; the result has the broadcast shape and the operands'
    /// scalar type (integer powers are computed exactly and wrap).
    ///
    /// ```swift
    /// let y = MLTensor([2, 3] as [Float]).pow(MLTensor([3, 2] as [Float]))   // [8, 9]
    /// ```
    ///
    /// - Precondition: Same numeric (non-`Bool`) scalar type, broadcastable shapes.
    public func pow(_ exponent: MLTensor) -> MLTensor {
        binary(.pow, exponent)
    }

    /// Raises each element to a scalar power (converted to the tensor's scalar type).
    ///
    /// ```swift
    /// let y = MLTensor([2, 3] as [Float]).pow(Float(2))   // [4, 9]
    /// ```
    ///
    /// - Precondition: The scalar type is not `Bool`.
    public func pow(_ exponent: some MLTensorScalar & Numeric) -> MLTensor {
        binary(.pow, scalarOperand(exponent))
    }

    /// Clamps each element to an inclusive range.
    ///
    /// Computed as `min(max(x, lower), upper)` (two element-wise ops that fuse with their
    /// neighbours); the bounds are converted to the tensor's scalar type. NaN stays NaN.
    ///
    /// ```swift
    /// MLTensor([-1, 0.5, 2] as [Float]).clamped(to: 0...1)   // [0, 0.5, 1]
    /// ```
    ///
    /// - Precondition: The scalar type is not `Bool`.
    public func clamped(to bounds: ClosedRange<Float>) -> MLTensor {
        binary(.max, scalarOperand(bounds.lowerBound)).binary(.min, scalarOperand(bounds.upperBound))
    }

    /// Clamps each element from below: `max(x, lower)`.
    ///
    /// ```swift
    /// MLTensor([-1, 2] as [Float]).clamped(to: 0...)   // [0, 2]
    /// ```
    ///
    /// - Precondition: The scalar type is not `Bool`.
    public func clamped(to bounds: PartialRangeFrom<Float>) -> MLTensor {
        binary(.max, scalarOperand(bounds.lowerBound))
    }

    /// Clamps each element from above: `min(x, upper)`.
    ///
    /// ```swift
    /// MLTensor([-1, 2] as [Float]).clamped(to: ...1)   // [-1, 1]
    /// ```
    ///
    /// - Precondition: The scalar type is not `Bool`.
    public func clamped(to bounds: PartialRangeThrough<Float>) -> MLTensor {
        binary(.min, scalarOperand(bounds.upperBound))
    }

    /// Converts the elements to another scalar type.
    ///
    /// Same shape. Floats to integers truncate toward zero and wrap to the width; integers to
    /// floats round to nearest; anything to `Bool` is `value != 0`; `Bool` becomes 0 or 1.
    ///
    /// ```swift
    /// let f = MLTensor([1, 2] as [Int32]).cast(to: Float.self)   // [1.0, 2.0]
    /// ```
    public func cast<Scalar: MLTensorScalar>(to scalarType: Scalar.Type) -> MLTensor {
        MLTensor(.cast(Scalar.kernelScalarType), [self])
    }

    /// Converts the elements to the scalar type of `other` (same rules as `cast(to:)`).
    ///
    /// ```swift
    /// let f = indices.cast(like: logits)   // Int32 → Float
    /// ```
    public func cast(like other: MLTensor) -> MLTensor {
        MLTensor(.cast(other.kernelType), [self])
    }
}

/// Returns the element-wise minimum of two tensors.
///
/// The shapes must be broadcastable; the result has the broadcast shape and the operands'
/// scalar type. NaN propagates (as NumPy's `minimum`).
///
/// ```swift
/// pointwiseMin(MLTensor([1, 5] as [Float]), MLTensor([3, 2] as [Float]))   // [1, 2]
/// ```
///
/// - Precondition: Both tensors have the same scalar type and broadcastable shapes.
public func pointwiseMin(_ lhs: MLTensor, _ rhs: MLTensor) -> MLTensor {
    lhs.binary(.min, rhs)
}

/// Returns the element-wise maximum of two tensors.
///
/// The shapes must be broadcastable; the result has the broadcast shape and the operands'
/// scalar type. NaN propagates (as NumPy's `maximum`).
///
/// ```swift
/// pointwiseMax(MLTensor([1, 5] as [Float]), MLTensor([3, 2] as [Float]))   // [3, 5]
/// ```
///
/// - Precondition: Both tensors have the same scalar type and broadcastable shapes.
public func pointwiseMax(_ lhs: MLTensor, _ rhs: MLTensor) -> MLTensor {
    lhs.binary(.max, rhs)
}
