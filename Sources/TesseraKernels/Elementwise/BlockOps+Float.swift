import CTesseraSIMD
import Foundation

/// The floating-point compute types: `Float` and `Double` share one generic implementation
/// of every op; each supplies its vector `exp` and its C-library functions.
@usableFromInline
protocol FloatComputeScalar: FusedComputeScalar, BinaryFloatingPoint, Codable {
    static func vectorExp(_ x: SIMD16<Self>) -> SIMD16<Self>
    /// `dst[i] = e^src[i]` over a block.
    static func blockExp(_ src: UnsafePointer<Self>, _ dst: UnsafeMutablePointer<Self>, _ n: Int)
    /// Runs `op` with a wider vector kernel when the CPU has one; `false` when it did nothing.
    static func wideBinary(
        _ op: BinaryOp, _ a: BlockOperand<Self>, _ b: BlockOperand<Self>, _ dst: UnsafeMutablePointer<Self>, _ n: Int
    ) -> Bool
    /// Runs `op` with a vector kernel when the CPU has one; `false` when it did nothing.
    static func wideUnary(_ op: UnaryOp, _ src: UnsafePointer<Self>, _ dst: UnsafeMutablePointer<Self>, _ n: Int)
        -> Bool
    /// `dst[i] = sqrt(src[i])` over a block.
    static func blockSqrt(_ src: UnsafePointer<Self>, _ dst: UnsafeMutablePointer<Self>, _ n: Int)
    static func vectorSqrt(_ x: SIMD16<Self>) -> SIMD16<Self>
    static func libm(_ op: UnaryOp, _ x: Self) -> Self
    static func libmPow(_ x: Self, _ y: Self) -> Self
    static func libmFmod(_ x: Self, _ y: Self) -> Self
}

extension FloatComputeScalar {
    @usableFromInline static func supports(_ op: UnaryOp) -> Bool { true }

    @usableFromInline
    static func apply(_ op: UnaryOp, _ src: UnsafePointer<Self>, _ dst: UnsafeMutablePointer<Self>, _ n: Int) {
        typealias V = SIMD16<Self>
        if wideUnary(op, src, dst, n) { return }
        switch op {
        case .neg: BlockLoop.map(src, dst, n) { -$0 }
        case .abs:
            BlockLoop.map(src, dst, n) { $0.replacing(with: -$0, where: $0 .< 0).replacing(with: 0, where: $0 .== 0) }
        case .sign:
            BlockLoop.map(src, dst, n) { x in
                var r = V(repeating: 0)
                r.replace(with: 1, where: x .> 0)
                r.replace(with: -1, where: x .< 0)
                r.replace(with: x, where: x .!= x)
                return r
            }
        case .sqrt: blockSqrt(src, dst, n)
        case .rsqrt: BlockLoop.map(src, dst, n) { 1 / vectorSqrt($0) }
        case .square: BlockLoop.map(src, dst, n) { $0 * $0 }
        case .reciprocal: BlockLoop.map(src, dst, n) { 1 / $0 }
        case .exp: blockExp(src, dst, n)
        case .sigmoid: BlockLoop.map(src, dst, n) { 1 / (1 + vectorExp(-$0)) }
        case .floor: BlockLoop.map(src, dst, n) { $0.rounded(.down) }
        case .ceil: BlockLoop.map(src, dst, n) { $0.rounded(.up) }
        case .round: BlockLoop.map(src, dst, n) { $0.rounded(.toNearestOrEven) }
        case .erf:
            // Tessera's float32 erf (CTesseraSIMD, every width the same bits) is good to ~1e-7,
            // which is float precision but not double's.
            if computeType == .float32 {
                tessera_erf_f32_vector(
                    UnsafeRawPointer(src).assumingMemoryBound(to: Float.self),
                    UnsafeMutableRawPointer(dst).assumingMemoryBound(to: Float.self), n)
            } else {
                BlockLoop.mapScalar(src, dst, n) { libm(op, $0) }
            }
        case .exp2, .log, .sin, .cos, .tan, .asin, .acos, .atan, .sinh, .cosh, .tanh, .asinh, .acosh, .atanh:
            BlockLoop.mapScalar(src, dst, n) { libm(op, $0) }
        }
    }

    @usableFromInline
    static func apply(
        _ op: BinaryOp, _ a: BlockOperand<Self>, _ b: BlockOperand<Self>, _ dst: UnsafeMutablePointer<Self>, _ n: Int
    ) {
        typealias V = SIMD16<Self>
        @inline(__always) func flag(_ m: SIMDMask<V.MaskStorage>) -> V {
            V(repeating: 0).replacing(with: 1, where: m)
        }
        if wideBinary(op, a, b, dst, n) { return }
        switch op {
        case .add: BlockLoop.map(a, b, dst, n) { $0 + $1 }
        case .sub: BlockLoop.map(a, b, dst, n) { $0 - $1 }
        case .mul: BlockLoop.map(a, b, dst, n) { $0 * $1 }
        case .div: BlockLoop.map(a, b, dst, n) { $0 / $1 }
        case .min:
            BlockLoop.map(a, b, dst, n) { x, y in
                var r = x.replacing(with: y, where: y .< x)
                r.replace(with: x, where: x .!= x)
                r.replace(with: y, where: y .!= y)
                return r
            }
        case .max:
            BlockLoop.map(a, b, dst, n) { x, y in
                var r = x.replacing(with: y, where: y .> x)
                r.replace(with: x, where: x .!= x)
                r.replace(with: y, where: y .!= y)
                return r
            }
        case .equal: BlockLoop.map(a, b, dst, n) { flag($0 .== $1) }
        case .notEqual: BlockLoop.map(a, b, dst, n) { flag($0 .!= $1) }
        case .less: BlockLoop.map(a, b, dst, n) { flag($0 .< $1) }
        case .lessEqual: BlockLoop.map(a, b, dst, n) { flag($0 .<= $1) }
        case .greater: BlockLoop.map(a, b, dst, n) { flag($0 .> $1) }
        case .greaterEqual: BlockLoop.map(a, b, dst, n) { flag($0 .>= $1) }
        case .logicalAnd: BlockLoop.map(a, b, dst, n) { flag(($0 .!= 0) .& ($1 .!= 0)) }
        case .logicalOr: BlockLoop.map(a, b, dst, n) { flag(($0 .!= 0) .| ($1 .!= 0)) }
        case .logicalXor: BlockLoop.map(a, b, dst, n) { flag(($0 .!= 0) .^ ($1 .!= 0)) }
        case .pow: BlockLoop.mapScalar(a, b, dst, n) { libmPow($0, $1) }
        case .remainder:
            // Floored modulo (Python, NumPy `mod`): the result takes the divisor's sign.
            BlockLoop.mapScalar(a, b, dst, n) { x, y in
                var r = libmFmod(x, y)
                if r != 0 && ((r < 0) != (y < 0)) { r += y }
                return r
            }
        }
    }

    @usableFromInline
    static func select(
        _ cond: UnsafePointer<Self>, _ a: UnsafePointer<Self>, _ b: UnsafePointer<Self>,
        _ dst: UnsafeMutablePointer<Self>, _ n: Int
    ) {
        for i in 0..<n { dst[i] = cond[i] != 0 ? a[i] : b[i] }
    }
}

extension Float: FloatComputeScalar {
    @usableFromInline static var computeType: FusedProgram.ComputeType { .float32 }
    @usableFromInline @inline(__always)
    static func vectorExp(_ x: SIMD16<Float>) -> SIMD16<Float> { SIMDMath.exp(x) }
    @usableFromInline @inline(__always)
    static func vectorSqrt(_ x: SIMD16<Float>) -> SIMD16<Float> { SIMDMath.sqrt(x) }
    @usableFromInline
    static func wideBinary(
        _ op: BinaryOp, _ a: BlockOperand<Float>, _ b: BlockOperand<Float>, _ dst: UnsafeMutablePointer<Float>,
        _ n: Int
    ) -> Bool {
        guard SIMDMath.hasAVX2FMA else { return false }
        let code: Int32
        switch op {
        case .add: code = 0
        case .sub: code = 1
        case .mul: code = 2
        case .div: code = 3
        case .min: code = 4
        case .max: code = 5
        case .equal: code = 6
        case .notEqual: code = 7
        case .less: code = 8
        case .lessEqual: code = 9
        case .greater: code = 10
        case .greaterEqual: code = 11
        default: return false
        }
        switch (a, b) {
        case (.block(let pa), .block(let pb)): tessera_binary_f32_vector(code, pa, 0, pb, 0, dst, n)
        case (.block(let pa), .uniform(let vb)): tessera_binary_f32_vector(code, pa, 0, nil, vb, dst, n)
        case (.uniform(let va), .block(let pb)): tessera_binary_f32_vector(code, nil, va, pb, 0, dst, n)
        case (.uniform, .uniform): return false
        }
        return true
    }
    @usableFromInline
    static func binaryPair(
        _ op1: BinaryOp, left1: Bool, _ s1: Float, _ op2: BinaryOp, left2: Bool, _ s2: Float, _ p: UnsafePointer<Float>,
        _ dst: UnsafeMutablePointer<Float>, _ n: Int
    ) -> Bool {
        guard SIMDMath.hasAVX2FMA, let code1 = op1.arithmeticCode, let code2 = op2.arithmeticCode else { return false }
        tessera_binary_pair_f32_vector(code1, left1 ? 1 : 0, s1, code2, left2 ? 1 : 0, s2, p, dst, n)
        return true
    }
    @usableFromInline
    static func wideUnary(_ op: UnaryOp, _ src: UnsafePointer<Float>, _ dst: UnsafeMutablePointer<Float>, _ n: Int)
        -> Bool
    {
        guard SIMDMath.hasAVX2FMA else { return false }
        let code: Int
        switch op {
        case .abs: code = TESSERA_UNARY_ABS
        case .neg: code = TESSERA_UNARY_NEG
        case .sign: code = TESSERA_UNARY_SIGN
        case .square: code = TESSERA_UNARY_SQUARE
        case .reciprocal: code = TESSERA_UNARY_RECIPROCAL
        case .rsqrt: code = TESSERA_UNARY_RSQRT
        case .floor: code = TESSERA_UNARY_FLOOR
        case .ceil: code = TESSERA_UNARY_CEIL
        case .round: code = TESSERA_UNARY_ROUND
        case .sigmoid: code = TESSERA_UNARY_SIGMOID
        case .tanh: code = TESSERA_UNARY_TANH
        default: return false
        }
        tessera_unary_f32_vector(Int32(code), src, dst, n)
        return true
    }
    @usableFromInline
    static func blockSqrt(_ src: UnsafePointer<Float>, _ dst: UnsafeMutablePointer<Float>, _ n: Int) {
        if SIMDMath.hasAVX2FMA {
            tessera_sqrt_f32_vector(src, dst, n)
        } else {
            BlockLoop.map(src, dst, n) { vectorSqrt($0) }
        }
    }
    @usableFromInline
    static func blockExp(_ src: UnsafePointer<Float>, _ dst: UnsafeMutablePointer<Float>, _ n: Int) {
        if SIMDMath.hasAVX2FMA {
            _ = SIMDMath.expShifted(src, into: dst, count: n, shift: 0)
        } else {
            BlockLoop.map(src, dst, n) { vectorExp($0) }
        }
    }
    @usableFromInline @inline(__always) static func libmPow(_ x: Float, _ y: Float) -> Float { Foundation.pow(x, y) }
    @usableFromInline @inline(__always) static func libmFmod(_ x: Float, _ y: Float) -> Float { Foundation.fmod(x, y) }
    @usableFromInline @inline(__always)
    static func libm(_ op: UnaryOp, _ x: Float) -> Float {
        switch op {
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
        case .exp: return Foundation.exp(x)
        case .erf: return Foundation.erf(x)
        default: kernelFailure("[elementwise] \(op) has a vector body")
        }
    }
}

extension Double: FloatComputeScalar {
    @usableFromInline static var computeType: FusedProgram.ComputeType { .float64 }
    @usableFromInline @inline(__always)
    static func vectorSqrt(_ x: SIMD16<Double>) -> SIMD16<Double> { SIMDMath.sqrt(x) }
    @usableFromInline
    static func wideBinary(
        _ op: BinaryOp, _ a: BlockOperand<Double>, _ b: BlockOperand<Double>, _ dst: UnsafeMutablePointer<Double>,
        _ n: Int
    ) -> Bool { false }
    @usableFromInline
    static func wideUnary(_ op: UnaryOp, _ src: UnsafePointer<Double>, _ dst: UnsafeMutablePointer<Double>, _ n: Int)
        -> Bool
    { false }
    @usableFromInline
    static func blockSqrt(_ src: UnsafePointer<Double>, _ dst: UnsafeMutablePointer<Double>, _ n: Int) {
        BlockLoop.map(src, dst, n) { vectorSqrt($0) }
    }
    @usableFromInline
    static func blockExp(_ src: UnsafePointer<Double>, _ dst: UnsafeMutablePointer<Double>, _ n: Int) {
        BlockLoop.map(src, dst, n) { vectorExp($0) }
    }
    @usableFromInline @inline(__always)
    static func vectorExp(_ x: SIMD16<Double>) -> SIMD16<Double> {
        var r = x
        for lane in 0..<16 { r[lane] = Foundation.exp(x[lane]) }
        return r
    }
    @usableFromInline @inline(__always) static func libmPow(_ x: Double, _ y: Double) -> Double { Foundation.pow(x, y) }
    @usableFromInline @inline(__always)
    static func libmFmod(_ x: Double, _ y: Double) -> Double { Foundation.fmod(x, y) }
    @usableFromInline @inline(__always)
    static func libm(_ op: UnaryOp, _ x: Double) -> Double {
        switch op {
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
        case .exp: return Foundation.exp(x)
        case .erf: return Foundation.erf(x)
        default: kernelFailure("[elementwise] \(op) has a vector body")
        }
    }
}

extension BinaryOp {
    /// The C kernels' code of `+ - * /` (0–3); `nil` for the other ops.
    var arithmeticCode: Int32? {
        switch self {
        case .add: 0
        case .sub: 1
        case .mul: 2
        case .div: 3
        default: nil
        }
    }
}
