/// Integer and bool programs compute in `Int32`: add, sub and mul wrap; div truncates toward
/// zero and remainder is floored, both 0 for a zero divisor; pow is by repeated squaring
/// (negative exponents give 0 unless the base is ±1).
extension Int32: FusedComputeScalar {
    @usableFromInline static var computeType: FusedProgram.ComputeType { .int32 }

    @usableFromInline static func supports(_ op: UnaryOp) -> Bool { op.isDefinedForIntegers }

    @usableFromInline
    static func apply(_ op: UnaryOp, _ src: UnsafePointer<Int32>, _ dst: UnsafeMutablePointer<Int32>, _ n: Int) {
        typealias V = SIMD16<Int32>
        switch op {
        case .neg: BlockLoop.map(src, dst, n) { 0 &- $0 }
        case .abs: BlockLoop.map(src, dst, n) { $0.replacing(with: 0 &- $0, where: $0 .< 0) }
        case .sign:
            BlockLoop.map(src, dst, n) { x in
                V(repeating: 0).replacing(with: 1, where: x .> 0).replacing(with: -1, where: x .< 0)
            }
        case .square: BlockLoop.map(src, dst, n) { $0 &* $0 }
        default: kernelFailure("[elementwise] \(op) is not defined for integer operands")
        }
    }

    @usableFromInline
    static func apply(
        _ op: BinaryOp, _ a: BlockOperand<Int32>, _ b: BlockOperand<Int32>, _ dst: UnsafeMutablePointer<Int32>,
        _ n: Int
    ) {
        typealias V = SIMD16<Int32>
        @inline(__always) func flag(_ m: SIMDMask<V.MaskStorage>) -> V {
            V(repeating: 0).replacing(with: 1, where: m)
        }
        switch op {
        case .add: BlockLoop.map(a, b, dst, n) { $0 &+ $1 }
        case .sub: BlockLoop.map(a, b, dst, n) { $0 &- $1 }
        case .mul: BlockLoop.map(a, b, dst, n) { $0 &* $1 }
        case .min: BlockLoop.map(a, b, dst, n) { pointwiseMin($0, $1) }
        case .max: BlockLoop.map(a, b, dst, n) { pointwiseMax($0, $1) }
        case .equal: BlockLoop.map(a, b, dst, n) { flag($0 .== $1) }
        case .notEqual: BlockLoop.map(a, b, dst, n) { flag($0 .!= $1) }
        case .less: BlockLoop.map(a, b, dst, n) { flag($0 .< $1) }
        case .lessEqual: BlockLoop.map(a, b, dst, n) { flag($0 .<= $1) }
        case .greater: BlockLoop.map(a, b, dst, n) { flag($0 .> $1) }
        case .greaterEqual: BlockLoop.map(a, b, dst, n) { flag($0 .>= $1) }
        case .logicalAnd: BlockLoop.map(a, b, dst, n) { flag(($0 .!= 0) .& ($1 .!= 0)) }
        case .logicalOr: BlockLoop.map(a, b, dst, n) { flag(($0 .!= 0) .| ($1 .!= 0)) }
        case .logicalXor: BlockLoop.map(a, b, dst, n) { flag(($0 .!= 0) .^ ($1 .!= 0)) }
        case .div:
            BlockLoop.mapScalar(a, b, dst, n) { x, y in
                y == 0 ? 0 : x.dividedReportingOverflow(by: y).partialValue
            }
        case .remainder:
            BlockLoop.mapScalar(a, b, dst, n) { x, y in
                if y == 0 { return 0 }
                var r = x.remainderReportingOverflow(dividingBy: y).partialValue
                if r != 0 && ((r < 0) != (y < 0)) { r &+= y }
                return r
            }
        case .pow: BlockLoop.mapScalar(a, b, dst, n) { integerPower($0, $1) }
        }
    }

    @usableFromInline
    static func select(
        _ cond: UnsafePointer<Int32>, _ a: UnsafePointer<Int32>, _ b: UnsafePointer<Int32>,
        _ dst: UnsafeMutablePointer<Int32>, _ n: Int
    ) {
        for i in 0..<n { dst[i] = cond[i] != 0 ? a[i] : b[i] }
    }

    @inline(__always)
    static func integerPower(_ base: Int32, _ exponent: Int32) -> Int32 {
        if exponent < 0 {
            if base == 1 { return 1 }
            if base == -1 { return exponent & 1 == 0 ? 1 : -1 }
            return 0
        }
        var result: Int32 = 1
        var b = base
        var e = exponent
        while e > 0 {
            if e & 1 == 1 { result &*= b }
            b &*= b
            e >>= 1
        }
        return result
    }
}
