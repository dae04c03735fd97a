/// An element-wise function of one operand.
///
/// The kernels implement every case for `float32`, `float16` (computed in `float32`) and
/// `float64`. Integer types support the cases whose ``isDefinedForIntegers`` is true; `bool`
/// supports none (use the logical binary ops).
///
/// Semantics follow NumPy where they differ between libraries: `round` rounds half to even,
/// `sign` is -1, 0 or 1 (NaN stays NaN), `rsqrt(0)` is `+inf`.
@usableFromInline package enum UnaryOp: UInt8, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case neg, abs, sign, sqrt, rsqrt, square, reciprocal
    case exp, exp2, log
    case sin, cos, tan, asin, acos, atan, sinh, cosh, tanh, asinh, acosh, atanh
    case floor, ceil, round
    case sigmoid, erf

    /// Whether the op applies to integer operands (wrapping on overflow, as NumPy does).
    @inlinable
    package var isDefinedForIntegers: Bool {
        switch self {
        case .neg, .abs, .sign, .square: return true
        default: return false
        }
    }

    /// Whether the op calls a transcendental function (it costs more per element, so
    /// parallel loops split earlier).
    @inlinable
    package var isTranscendental: Bool {
        switch self {
        case .neg, .abs, .sign, .sqrt, .rsqrt, .square, .reciprocal, .floor, .ceil, .round: return false
        default: return true
        }
    }

    @usableFromInline package var description: String { "\(Self.names[Int(rawValue)])" }

    static let names = [
        "neg", "abs", "sign", "sqrt", "rsqrt", "square", "reciprocal", "exp", "exp2", "log", "sin", "cos",
        "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "floor", "ceil",
        "round", "sigmoid", "erf",
    ]
}

/// An element-wise function of two operands, applied with NumPy broadcasting.
///
/// Arithmetic keeps the operand type; the six comparisons produce `bool`. On integers,
/// `add`, `sub` and `mul` wrap; `div` truncates toward zero and `remainder` takes the sign of
/// the divisor (floored, as Python's `%`), and both give 0 for a zero divisor instead of
/// trapping. On floats, `remainder` is also floored (`x - floor(x / y) * y`, NumPy's `mod`).
/// `logicalAnd`, `logicalOr`, `logicalXor` treat non-zero as true and produce `bool`.
/// `min`/`max` propagate NaN, as NumPy's `minimum`/`maximum` do.
@usableFromInline package enum BinaryOp: UInt8, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case add, sub, mul, div, remainder, pow, min, max
    case equal, notEqual, less, lessEqual, greater, greaterEqual
    case logicalAnd, logicalOr, logicalXor

    /// Whether the result is `bool` whatever the operand type.
    @inlinable
    package var producesBool: Bool {
        switch self {
        case .equal, .notEqual, .less, .lessEqual, .greater, .greaterEqual, .logicalAnd, .logicalOr, .logicalXor:
            return true
        default: return false
        }
    }

    /// Whether the op applies to `bool` operands (comparisons, logic, min and max).
    @inlinable
    package var isDefinedForBool: Bool {
        switch self {
        case .add, .sub, .mul, .div, .remainder, .pow: return false
        default: return true
        }
    }

    /// Whether the op calls a transcendental function.
    @inlinable
    package var isTranscendental: Bool { self == .pow || self == .remainder }

    @usableFromInline package var description: String { "\(Self.names[Int(rawValue)])" }

    static let names = [
        "add", "sub", "mul", "div", "remainder", "pow", "min", "max", "equal", "notEqual", "less", "lessEqual",
        "greater", "greaterEqual", "logicalAnd", "logicalOr", "logicalXor",
    ]
}
