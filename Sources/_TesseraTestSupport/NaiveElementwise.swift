import Foundation
import TesseraKernels

/// Reference element-wise semantics, one scalar at a time in `Double` (floats) or `Int64`
/// (integers), written from the documented rules rather than from the kernels.
package enum NaiveElementwise {
    /// The reference value of a unary op on a float.
    package static func unary(_ op: UnaryOp, _ x: Double) -> Double {
        switch op {
        case .neg: return -x
        case .abs: return Swift.abs(x)
        case .sign: return x.isNaN ? x : (x > 0 ? 1 : (x < 0 ? -1 : 0))
        case .sqrt: return x.squareRoot()
        case .rsqrt: return 1 / x.squareRoot()
        case .square: return x * x
        case .reciprocal: return 1 / x
        case .exp: return Foundation.exp(x)
        case .exp2: return Foundation.exp2(x)
        case .log: return Foundation.log(x)
        case .sin: return Foundation.sin(x)
        case .cos: return Foundation.cos(x)
        case .tan: return Foundation.tan(x)
        case .asin: return Foundation.asin(x)
        case .acos: return Foundation.acos(x)
        case .atan: return Foundation.atan(x)
        case .sinh: return Foundation.sinh(x)
        case .cosh: return Foundation.cosh(x)
        case .tanh: return Foundation.tanh(x)
        case .asinh: return Foundation.asinh(x)
        case .acosh: return Foundation.acosh(x)
        case .atanh: return Foundation.atanh(x)
        case .floor: return x.rounded(.down)
        case .ceil: return x.rounded(.up)
        case .round: return x.rounded(.toNearestOrEven)
        case .sigmoid: return 1 / (1 + Foundation.exp(-x))
        case .erf: return Foundation.erf(x)
        }
    }

    /// The reference value of a binary op on floats (comparisons and logic give 1 or 0).
    package static func binary(_ op: BinaryOp, _ x: Double, _ y: Double) -> Double {
        switch op {
        case .add: return x + y
        case .sub: return x - y
        case .mul: return x * y
        case .div: return x / y
        case .remainder:
            var r = Foundation.fmod(x, y)
            if r != 0 && ((r < 0) != (y < 0)) { r += y }
            return r
        case .pow: return Foundation.pow(x, y)
        case .min: return x.isNaN || y.isNaN ? .nan : Swift.min(x, y)
        case .max: return x.isNaN || y.isNaN ? .nan : Swift.max(x, y)
        case .equal: return x == y ? 1 : 0
        case .notEqual: return x != y ? 1 : 0
        case .less: return x < y ? 1 : 0
        case .lessEqual: return x <= y ? 1 : 0
        case .greater: return x > y ? 1 : 0
        case .greaterEqual: return x >= y ? 1 : 0
        case .logicalAnd: return (x != 0) && (y != 0) ? 1 : 0
        case .logicalOr: return (x != 0) || (y != 0) ? 1 : 0
        case .logicalXor: return (x != 0) != (y != 0) ? 1 : 0
        }
    }

    /// The reference value of a binary op on integers, before wrapping to the storage width.
    package static func binary(_ op: BinaryOp, _ x: Int64, _ y: Int64) -> Int64 {
        switch op {
        case .add: return x &+ y
        case .sub: return x &- y
        case .mul: return x &* y
        case .div: return y == 0 ? 0 : x / y
        case .remainder:
            if y == 0 { return 0 }
            var r = x % y
            if r != 0 && ((r < 0) != (y < 0)) { r += y }
            return r
        case .pow:
            if y < 0 { return x == 1 ? 1 : (x == -1 ? (y % 2 == 0 ? 1 : -1) : 0) }
            var r: Int64 = 1
            for _ in 0..<y { r = r &* x }
            return r
        case .min: return Swift.min(x, y)
        case .max: return Swift.max(x, y)
        case .equal: return x == y ? 1 : 0
        case .notEqual: return x != y ? 1 : 0
        case .less: return x < y ? 1 : 0
        case .lessEqual: return x <= y ? 1 : 0
        case .greater: return x > y ? 1 : 0
        case .greaterEqual: return x >= y ? 1 : 0
        case .logicalAnd: return (x != 0) && (y != 0) ? 1 : 0
        case .logicalOr: return (x != 0) || (y != 0) ? 1 : 0
        case .logicalXor: return (x != 0) != (y != 0) ? 1 : 0
        }
    }

    /// An input range on which `op` is defined and well-conditioned, for random test data.
    package static func domain(of op: UnaryOp) -> ClosedRange<Double> {
        switch op {
        case .sqrt, .rsqrt, .log: return 0.01...10
        case .asin, .acos, .atanh: return -0.95...0.95
        case .acosh: return 1.01...10
        case .tan: return -1.4...1.4
        case .exp, .exp2, .sinh, .cosh: return -20...20
        case .reciprocal: return 0.1...10
        default: return -6...6
        }
    }
}
