import Foundation
import TesseraGraph
import TesseraKernels
import TesseraTensor

/// Element-wise MIL ops: binary arithmetic and comparisons, unary math, activations, cast
/// and select. Each is a composition of graph element-wise ops, which the executor fuses.
extension OperationLowering {
    static let elementwiseHandlers: [String: Handler] = {
        var handlers: [String: Handler] = [:]
        let binaries: [(String, BinaryOp)] = [
            ("add", .add), ("sub", .sub), ("mul", .mul), ("pow", .pow), ("maximum", .max), ("minimum", .min),
            ("equal", .equal), ("not_equal", .notEqual), ("less", .less), ("less_equal", .lessEqual),
            ("greater", .greater), ("greater_equal", .greaterEqual), ("logical_and", .logicalAnd),
            ("logical_or", .logicalOr), ("logical_xor", .logicalXor), ("mod", .remainder),
        ]
        for (type, op) in binaries {
            handlers[type] = { lowering in
                let (x, y) = (try lowering.tensor("x"), try lowering.tensor("y"))
                return { args in [try .elementwise(op, args[x], args[y])] }
            }
        }
        handlers["real_div"] = { lowering in
            let (x, y) = (try lowering.tensor("x"), try lowering.tensor("y"))
            return { args in [try .elementwise(.div, args[x].asFloat, args[y].asFloat)] }
        }
        handlers["floor_div"] = { lowering in
            let (x, y) = (try lowering.tensor("x"), try lowering.tensor("y"))
            return { args in
                let (a, b) = MLTensor.promoted(args[x], args[y])
                if a.kernelType.isFloatingPoint { return [try MLTensor.elementwise(.div, a, b).elementwise(.floor)] }
                // Floored integer division: a - mod(a, b) is an exact multiple of b.
                let remainder = try MLTensor.elementwise(.remainder, a, b)
                return [try .elementwise(.div, try .elementwise(.sub, a, remainder), b)]
            }
        }

        let unaries: [(String, UnaryOp)] = [
            ("abs", .abs), ("acos", .acos), ("asin", .asin), ("atan", .atan), ("atanh", .atanh), ("ceil", .ceil),
            ("cos", .cos), ("cosh", .cosh), ("erf", .erf), ("exp", .exp), ("exp2", .exp2), ("floor", .floor),
            ("round", .round), ("sign", .sign), ("sin", .sin), ("sinh", .sinh), ("sqrt", .sqrt), ("square", .square),
            ("tan", .tan), ("tanh", .tanh), ("sigmoid", .sigmoid),
        ]
        for (type, op) in unaries {
            handlers[type] = { lowering in
                let x = try lowering.tensor("x")
                return { args in [args[x].elementwise(op)] }
            }
        }
        // log, rsqrt and inverse add an epsilon first (MIL's defaults: 1e-45, 1e-12, 1e-4).
        let withEpsilon: [(String, Double, @Sendable (MLTensor) -> MLTensor)] = [
            ("log", 1e-45, { $0.elementwise(.log) }),
            ("rsqrt", 1e-12, { $0.elementwise(.rsqrt) }),
            ("inverse", 1e-4, { $0.elementwise(.reciprocal) }),
        ]
        for (type, defaultEpsilon, body) in withEpsilon {
            handlers[type] = { lowering in
                let x = try lowering.tensor("x")
                let epsilon = try lowering.double("epsilon") ?? defaultEpsilon
                return { args in
                    let v = args[x].asFloat
                    return [body(MLTensor(.binary(.add), v, v.scalar(epsilon)))]
                }
            }
        }
        handlers["logical_not"] = { lowering in
            let x = try lowering.tensor("x")
            return { args in [try .elementwise(.equal, args[x].converted(to: .bool), MLTensor(false))] }
        }
        handlers["identity"] = { lowering in
            let x = try lowering.tensor("x")
            return { args in [args[x]] }
        }
        handlers["cast"] = { lowering in
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
                if target == .bool && v.kernelType != .bool { return [try .elementwise(.notEqual, v, v.scalar(0))] }
                return [v.converted(to: target)]
            }
        }
        handlers["select"] = { lowering in
            let (c, a, b) = (try lowering.tensor("cond"), try lowering.tensor("a"), try lowering.tensor("b"))
            return { args in [try .selecting(args[c], args[a], args[b])] }
        }
        handlers.merge(activationHandlers) { a, _ in a }
        return handlers
    }()

    /// Activation functions, each defined by its MIL docstring.
    static let activationHandlers: [String: Handler] = {
        var handlers: [String: Handler] = [:]
        /// An activation of `x` and optional scalar `alpha`/`beta` parameters.
        func activation(
            alpha: Double? = nil, beta: Double? = nil,
            _ body: @escaping @Sendable (MLTensor, Double, Double) throws -> MLTensor
        ) -> Handler {
            return { lowering in
                let x = try lowering.tensor("x")
                let a = try lowering.double("alpha") ?? alpha ?? 0
                let b = try lowering.double("beta") ?? beta ?? 0
                return { args in [try body(args[x].asFloat, a, b)] }
            }
        }
        handlers["relu"] = activation { x, _, _ in try .elementwise(.max, x, x.scalar(0)) }
        handlers["relu6"] = activation { x, _, _ in
            try .elementwise(.min, try .elementwise(.max, x, x.scalar(0)), x.scalar(6))
        }
        handlers["clip"] = activation { x, alpha, beta in
            try .elementwise(.min, try .elementwise(.max, x, x.scalar(alpha)), x.scalar(beta))
        }
        handlers["threshold"] = activation { x, alpha, _ in try .elementwise(.max, x, x.scalar(alpha)) }
        handlers["leaky_relu"] = activation(alpha: 0.01) { x, alpha, _ in
            try .selecting(
                try .elementwise(.greaterEqual, x, x.scalar(0)), x, try .elementwise(.mul, x, x.scalar(alpha)))
        }
        handlers["elu"] = activation(alpha: 1) { x, alpha, _ in
            let negative = try MLTensor.elementwise(
                .mul, try .elementwise(.sub, x.elementwise(.exp), x.scalar(1)), x.scalar(alpha))
            return try .selecting(try .elementwise(.greater, x, x.scalar(0)), x, negative)
        }
        handlers["thresholded_relu"] = activation(alpha: 1) { x, alpha, _ in
            try .selecting(try .elementwise(.greaterEqual, x, x.scalar(alpha)), x, x.scalar(0))
        }
        handlers["linear_activation"] = activation { x, alpha, beta in
            try .elementwise(.add, try .elementwise(.mul, x, x.scalar(alpha)), x.scalar(beta))
        }
        handlers["scaled_tanh"] = activation(alpha: 1, beta: 1) { x, alpha, beta in
            try .elementwise(
                .mul, try MLTensor.elementwise(.mul, x, x.scalar(beta)).elementwise(.tanh), x.scalar(alpha))
        }
        handlers["sigmoid_hard"] = activation(alpha: 0.2, beta: 0.5) { x, alpha, beta in
            let linear = try MLTensor.elementwise(.add, try .elementwise(.mul, x, x.scalar(alpha)), x.scalar(beta))
            return try .elementwise(.min, try .elementwise(.max, linear, x.scalar(0)), x.scalar(1))
        }
        handlers["clamped_relu"] = activation(alpha: 0, beta: 6) { x, alpha, beta in
            let positive = try MLTensor.elementwise(.min, x, x.scalar(beta))
            let negative = try MLTensor.elementwise(.min, try .elementwise(.mul, x, x.scalar(alpha)), x.scalar(beta))
            return try .selecting(try .elementwise(.greaterEqual, x, x.scalar(0)), positive, negative)
        }
        handlers["silu"] = activation { x, _, _ in try .elementwise(.mul, x, x.elementwise(.sigmoid)) }
        handlers["softsign"] = activation { x, _, _ in
            try .elementwise(.div, x, try .elementwise(.add, x.elementwise(.abs), x.scalar(1)))
        }
        handlers["softplus"] = activation { x, _, _ in
            // log(1 + exp(x)) = max(x, 0) + log(1 + exp(-|x|)), which does not overflow.
            let tail = try MLTensor.elementwise(
                .add, MLTensor(.unary(.neg), [x.elementwise(.abs)]).elementwise(.exp), x.scalar(1))
            return try .elementwise(.add, try .elementwise(.max, x, x.scalar(0)), tail.elementwise(.log))
        }
        handlers["softplus_parametric"] = { lowering in
            let x = try lowering.tensor("x")
            let alpha = try lowering.tensor("alpha")
            let beta = try lowering.tensor("beta")
            return { args in
                // alpha[C] · log(1 + exp(beta[C] · x)), per channel (axis 1).
                let v = args[x].asFloat
                let scaled = try MLTensor.elementwise(.mul, v, try v.channelVector(args[beta].asFloat))
                let tail = try MLTensor.elementwise(
                    .add, MLTensor(.unary(.neg), [scaled.elementwise(.abs)]).elementwise(.exp), v.scalar(1))
                let softplus = try MLTensor.elementwise(
                    .add, try .elementwise(.max, scaled, v.scalar(0)), tail.elementwise(.log))
                return [try .elementwise(.mul, softplus, try v.channelVector(args[alpha].asFloat))]
            }
        }
        handlers["gelu"] = { lowering in
            let x = try lowering.tensor("x")
            let mode = try lowering.string("mode") ?? "EXACT"
            guard ["EXACT", "TANH_APPROXIMATION", "SIGMOID_APPROXIMATION"].contains(mode) else {
                throw lowering.invalid("unknown gelu mode '\(mode)'")
            }
            return { args in [try gelu(args[x].asFloat, mode: mode)] }
        }
        handlers["prelu"] = { lowering in
            let x = try lowering.tensor("x")
            let alpha = try lowering.tensor("alpha")
            return { args in
                let v = args[x].asFloat
                let slope = try v.channelVector(args[alpha].asFloat)
                return [
                    try .selecting(try .elementwise(.greaterEqual, v, v.scalar(0)), v, try .elementwise(.mul, v, slope))
                ]
            }
        }
        return handlers
    }()

    /// GELU in one of MIL's three modes.
    static func gelu(_ x: MLTensor, mode: String) throws -> MLTensor {
        switch mode {
        case "TANH_APPROXIMATION":
            // 0.5 x (1 + tanh(√(2/π) (x + 0.044715 x³)))
            let cube = try MLTensor.elementwise(.mul, try .elementwise(.mul, x, x), x)
            let inner = try MLTensor.elementwise(.add, x, try .elementwise(.mul, cube, x.scalar(0.044715)))
            let t = try MLTensor.elementwise(.mul, inner, x.scalar((2 / Double.pi).squareRoot())).elementwise(.tanh)
            return try .elementwise(
                .mul, try .elementwise(.mul, x, x.scalar(0.5)), try .elementwise(.add, t, x.scalar(1)))
        case "SIGMOID_APPROXIMATION":
            // x · σ(1.702 x)
            return try .elementwise(.mul, x, try MLTensor.elementwise(.mul, x, x.scalar(1.702)).elementwise(.sigmoid))
        default:
            // 0.5 x (1 + erf(x / √2))
            let e = try MLTensor.elementwise(.mul, x, x.scalar(1 / 2.0.squareRoot())).elementwise(.erf)
            return try .elementwise(
                .mul, try .elementwise(.mul, x, x.scalar(0.5)), try .elementwise(.add, e, x.scalar(1)))
        }
    }
}
