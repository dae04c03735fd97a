import TesseraTensor

/// Element-wise MIL ops: binary arithmetic and comparisons, unary math, cast and select, on
/// the public `MLTensor` operators after MIL's type promotion (``MLTensor/promoted(_:_:)``).
extension MILOp {
    static let elementwiseOps: [MILOp] = {
        var ops: [MILOp] = []
        /// A binary op: `arithmetic` ones take bool operands as int32.
        func binary(
            _ name: String, cost: MILOpCost = .elementwise, arithmetic: Bool = true,
            _ body: @escaping @Sendable (MLTensor, MLTensor) -> MLTensor
        ) {
            ops.append(
                MILOp(name, batch: .elementwise, cost: cost) { lowering in
                    let (x, y) = (try lowering.tensor("x"), try lowering.tensor("y"))
                    return { args in
                        let (a, b) = MLTensor.promoted(args[x], args[y], arithmetic: arithmetic)
                        return [body(a, b)]
                    }
                })
        }
        binary("add") { $0 + $1 }
        binary("sub") { $0 - $1 }
        binary("mul") { $0 * $1 }
        binary("pow", cost: .transcendental) { $0.pow($1) }
        binary("mod") { $0 % $1 }
        binary("maximum", arithmetic: false) { pointwiseMax($0, $1) }
        binary("minimum", arithmetic: false) { pointwiseMin($0, $1) }
        binary("equal", arithmetic: false) { $0 .== $1 }
        binary("not_equal", arithmetic: false) { $0 .!= $1 }
        binary("less", arithmetic: false) { $0 .< $1 }
        binary("less_equal", arithmetic: false) { $0 .<= $1 }
        binary("greater", arithmetic: false) { $0 .> $1 }
        binary("greater_equal", arithmetic: false) { $0 .>= $1 }
        binary("logical_and", arithmetic: false) { $0.asBool .& $1.asBool }
        binary("logical_or", arithmetic: false) { $0.asBool .| $1.asBool }
        binary("logical_xor", arithmetic: false) { $0.asBool .^ $1.asBool }
        binary("real_div") { $0.asFloat / $1.asFloat }
        binary("floor_div") { a, b in
            if a.kernelType.isFloatingPoint { return (a / b).floor() }
            // Floored integer division: a - mod(a, b) is an exact multiple of b.
            return (a - a % b) / b
        }

        /// A unary op; `integers`: defined on integer tensors (others compute in Float32).
        func unary(
            _ name: String, cost: MILOpCost = .elementwise, integers: Bool = false,
            _ body: @escaping @Sendable (MLTensor) -> MLTensor
        ) {
            ops.append(
                MILOp(name, batch: .elementwise, cost: cost) { lowering in
                    let x = try lowering.tensor("x")
                    return { args in
                        let v = args[x]
                        let isComputable = v.kernelType.isFloatingPoint || (integers && v.kernelType != .bool)
                        return [body(isComputable ? v : v.asFloat)]
                    }
                })
        }
        unary("abs", integers: true) { $0.abs() }
        unary("sign", integers: true) { $0.sign() }
        unary("square", integers: true) { $0.squared() }
        unary("acos") { $0.acos() }
        unary("asin") { $0.asin() }
        unary("atan") { $0.atan() }
        unary("atanh") { $0.atanh() }
        unary("ceil") { $0.ceil() }
        unary("floor") { $0.floor() }
        unary("round") { $0.round() }
        unary("cos", cost: .transcendental) { $0.cos() }
        unary("sin", cost: .transcendental) { $0.sin() }
        unary("tan") { $0.tan() }
        unary("cosh") { $0.cosh() }
        unary("sinh") { $0.sinh() }
        unary("erf", cost: .transcendental) { $0.erf() }
        unary("exp", cost: .transcendental) { $0.exp() }
        unary("exp2") { $0.exp2() }
        unary("sqrt", cost: .transcendental) { $0.squareRoot() }
        unary("tanh", cost: .transcendental) { $0.tanh() }
        unary("sigmoid", cost: .transcendental) { $0.sigmoid() }

        // log, rsqrt and inverse add an epsilon first (MIL's defaults: 1e-45, 1e-12, 1e-4).
        let withEpsilon: [(String, Double, MILOpCost, @Sendable (MLTensor) -> MLTensor)] = [
            ("log", 1e-45, .transcendental, { $0.log() }),
            ("rsqrt", 1e-12, .transcendental, { $0.rsqrt() }),
            ("inverse", 1e-4, .elementwise, { $0.reciprocal() }),
        ]
        for (type, defaultEpsilon, cost, body) in withEpsilon {
            ops.append(
                MILOp(type, batch: .elementwise, cost: cost) { lowering in
                    let x = try lowering.tensor("x")
                    let epsilon = Float(try lowering.double("epsilon") ?? defaultEpsilon)
                    return { args in [body(args[x].asFloat + epsilon)] }
                })
        }
        ops.append(
            MILOp("logical_not", batch: .elementwise, cost: .elementwise) { lowering in
                let x = try lowering.tensor("x")
                return { args in [.!args[x].asBool] }
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
                let cast: @Sendable (MLTensor) -> MLTensor
                switch dtype {
                case "fp16", "fp32", "fp64", "bf16": cast = { $0.asFloat }
                case "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64": cast = { $0.asInt32 }
                case "bool": cast = { $0.asBool }
                default: throw lowering.invalid("cannot cast to '\(dtype)'")
                }
                return { args in [cast(args[x])] }
            })
        ops.append(
            MILOp("select", batch: .elementwise, cost: .elementwise) { lowering in
                let (c, a, b) = (try lowering.tensor("cond"), try lowering.tensor("a"), try lowering.tensor("b"))
                return { args in
                    let (x, y) = MLTensor.promoted(args[a], args[b], arithmetic: false)
                    return [MLTensor.selecting(args[c].asBool, x, y)]
                }
            })
        return ops
    }()
}
