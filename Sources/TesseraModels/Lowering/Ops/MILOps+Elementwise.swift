import Foundation
import TesseraGraph
import TesseraKernels
import TesseraTensor

/// Element-wise MIL ops: binary arithmetic and comparisons, unary math, cast and select.
/// Each is a composition of graph element-wise ops, which the executor fuses.
extension MILOp {
    static let elementwiseOps: [MILOp] = {
        var ops: [MILOp] = []
        let binaries: [(String, BinaryOp, MILOpCost)] = [
            ("add", .add, .elementwise), ("sub", .sub, .elementwise), ("mul", .mul, .elementwise),
            ("pow", .pow, .transcendental), ("maximum", .max, .elementwise), ("minimum", .min, .elementwise),
            ("equal", .equal, .elementwise), ("not_equal", .notEqual, .elementwise), ("less", .less, .elementwise),
            ("less_equal", .lessEqual, .elementwise), ("greater", .greater, .elementwise),
            ("greater_equal", .greaterEqual, .elementwise), ("logical_and", .logicalAnd, .elementwise),
            ("logical_or", .logicalOr, .elementwise), ("logical_xor", .logicalXor, .elementwise),
            ("mod", .remainder, .elementwise),
        ]
        for (type, op, cost) in binaries {
            ops.append(
                MILOp(type, batch: .elementwise, cost: cost) { lowering in
                    let (x, y) = (try lowering.tensor("x"), try lowering.tensor("y"))
                    return { args in [try .elementwise(op, args[x], args[y])] }
                })
        }
        ops.append(
            MILOp("real_div", batch: .elementwise, cost: .elementwise) { lowering in
                let (x, y) = (try lowering.tensor("x"), try lowering.tensor("y"))
                return { args in [try .elementwise(.div, args[x].asFloat, args[y].asFloat)] }
            })
        ops.append(
            MILOp("floor_div", batch: .elementwise, cost: .elementwise) { lowering in
                let (x, y) = (try lowering.tensor("x"), try lowering.tensor("y"))
                return { args in
                    let (a, b) = MLTensor.promoted(args[x], args[y])
                    if a.kernelType.isFloatingPoint {
                        return [try MLTensor.elementwise(.div, a, b).elementwise(.floor)]
                    }
                    // Floored integer division: a - mod(a, b) is an exact multiple of b.
                    let remainder = try MLTensor.elementwise(.remainder, a, b)
                    return [try .elementwise(.div, try .elementwise(.sub, a, remainder), b)]
                }
            })

        let unaries: [(String, UnaryOp, MILOpCost)] = [
            ("abs", .abs, .elementwise), ("acos", .acos, .elementwise), ("asin", .asin, .elementwise),
            ("atan", .atan, .elementwise), ("atanh", .atanh, .elementwise), ("ceil", .ceil, .elementwise),
            ("cos", .cos, .transcendental), ("cosh", .cosh, .elementwise), ("erf", .erf, .transcendental),
            ("exp", .exp, .transcendental), ("exp2", .exp2, .elementwise), ("floor", .floor, .elementwise),
            ("round", .round, .elementwise), ("sign", .sign, .elementwise), ("sin", .sin, .transcendental),
            ("sinh", .sinh, .elementwise), ("sqrt", .sqrt, .transcendental), ("square", .square, .elementwise),
            ("tan", .tan, .elementwise), ("tanh", .tanh, .transcendental), ("sigmoid", .sigmoid, .transcendental),
        ]
        for (type, op, cost) in unaries {
            ops.append(
                MILOp(type, batch: .elementwise, cost: cost) { lowering in
                    let x = try lowering.tensor("x")
                    return { args in [args[x].elementwise(op)] }
                })
        }
        // log, rsqrt and inverse add an epsilon first (MIL's defaults: 1e-45, 1e-12, 1e-4).
        let withEpsilon: [(String, Double, MILOpCost, @Sendable (MLTensor) -> MLTensor)] = [
            ("log", 1e-45, .transcendental, { $0.elementwise(.log) }),
            ("rsqrt", 1e-12, .transcendental, { $0.elementwise(.rsqrt) }),
            ("inverse", 1e-4, .elementwise, { $0.elementwise(.reciprocal) }),
        ]
        for (type, defaultEpsilon, cost, body) in withEpsilon {
            ops.append(
                MILOp(type, batch: .elementwise, cost: cost) { lowering in
                    let x = try lowering.tensor("x")
                    let epsilon = try lowering.double("epsilon") ?? defaultEpsilon
                    return { args in
                        let v = args[x].asFloat
                        return [body(MLTensor(.binary(.add), v, v.scalar(epsilon)))]
                    }
                })
        }
        ops.append(
            MILOp("logical_not", batch: .elementwise, cost: .elementwise) { lowering in
                let x = try lowering.tensor("x")
                return { args in [try .elementwise(.equal, args[x].converted(to: .bool), MLTensor(false))] }
            })
        ops.append(
            MILOp("identity", batch: .elementwise, cost: .elementwise) { lowering in
                let x = try lowering.tensor("x")
                return { args in [args[x]] }
            })
        ops.append(
            MILOp("cast", batch: .elementwise, cost: .elementwise) { lowering in
                let x = try lowering.tensor("x")
                let dtype = try lowering.required(lowering.string("dtype"), "dtype")
                let target: KernelScalarType
                switch dtype {
                case "fp16", "fp32", "fp64", "bf16": target = .float32
                case "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64": target = .int32
                case "bool": target = .bool
                default: throw lowering.invalid("cannot cast to '\(dtype)'")
                }
                return { args in
                    let v = args[x]
                    if target == .bool && v.kernelType != .bool {
                        return [try .elementwise(.notEqual, v, v.scalar(0))]
                    }
                    return [v.converted(to: target)]
                }
            })
        ops.append(
            MILOp("select", batch: .elementwise, cost: .elementwise) { lowering in
                let (c, a, b) = (try lowering.tensor("cond"), try lowering.tensor("a"), try lowering.tensor("b"))
                return { args in [try .selecting(args[c], args[a], args[b])] }
            })
        return ops
    }()
}
