import Foundation
import TesseraGraph
import TesseraKernels
import TesseraTensor

/// Activation functions, each defined by its MIL docstring.
extension MILOp {
    static let activationOps: [MILOp] = {
        var ops: [MILOp] = []
        /// An element-wise activation of `x` and optional scalar `alpha`/`beta` parameters.
        func activation(
            _ name: String, cost: MILOpCost = .elementwise, alpha: Double? = nil, beta: Double? = nil,
            _ body: @escaping @Sendable (MLTensor, Double, Double) throws -> MLTensor
        ) {
            ops.append(
                MILOp(name, batch: .elementwise, cost: cost) { lowering in
                    let x = try lowering.tensor("x")
                    let a = try lowering.double("alpha") ?? alpha ?? 0
                    let b = try lowering.double("beta") ?? beta ?? 0
                    return { args in [try body(args[x].asFloat, a, b)] }
                })
        }
        activation("relu") { x, _, _ in try .elementwise(.max, x, x.scalar(0)) }
        activation("relu6") { x, _, _ in
            try .elementwise(.min, try .elementwise(.max, x, x.scalar(0)), x.scalar(6))
        }
        activation("clip") { x, alpha, beta in
            try .elementwise(.min, try .elementwise(.max, x, x.scalar(alpha)), x.scalar(beta))
        }
        activation("threshold") { x, alpha, _ in try .elementwise(.max, x, x.scalar(alpha)) }
        activation("leaky_relu", alpha: 0.01) { x, alpha, _ in
            try .selecting(
                try .elementwise(.greaterEqual, x, x.scalar(0)), x, try .elementwise(.mul, x, x.scalar(alpha)))
        }
        activation("elu", alpha: 1) { x, alpha, _ in
            let negative = try MLTensor.elementwise(
                .mul, try .elementwise(.sub, x.elementwise(.exp), x.scalar(1)), x.scalar(alpha))
            return try .selecting(try .elementwise(.greater, x, x.scalar(0)), x, negative)
        }
        activation("thresholded_relu", alpha: 1) { x, alpha, _ in
            try .selecting(try .elementwise(.greaterEqual, x, x.scalar(alpha)), x, x.scalar(0))
        }
        activation("linear_activation") { x, alpha, beta in
            try .elementwise(.add, try .elementwise(.mul, x, x.scalar(alpha)), x.scalar(beta))
        }
        activation("scaled_tanh", alpha: 1, beta: 1) { x, alpha, beta in
            try .elementwise(
                .mul, try MLTensor.elementwise(.mul, x, x.scalar(beta)).elementwise(.tanh), x.scalar(alpha))
        }
        activation("sigmoid_hard", alpha: 0.2, beta: 0.5) { x, alpha, beta in
            let linear = try MLTensor.elementwise(.add, try .elementwise(.mul, x, x.scalar(alpha)), x.scalar(beta))
            return try .elementwise(.min, try .elementwise(.max, linear, x.scalar(0)), x.scalar(1))
        }
        activation("clamped_relu", alpha: 0, beta: 6) { x, alpha, beta in
            let positive = try MLTensor.elementwise(.min, x, x.scalar(beta))
            let negative = try MLTensor.elementwise(.min, try .elementwise(.mul, x, x.scalar(alpha)), x.scalar(beta))
            return try .selecting(try .elementwise(.greaterEqual, x, x.scalar(0)), positive, negative)
        }
        activation("silu", cost: .transcendental) { x, _, _ in try .elementwise(.mul, x, x.elementwise(.sigmoid)) }
        activation("softsign") { x, _, _ in
            try .elementwise(.div, x, try .elementwise(.add, x.elementwise(.abs), x.scalar(1)))
        }
        activation("softplus") { x, _, _ in
            // log(1 + exp(x)) = max(x, 0) + log(1 + exp(-|x|)), which does not overflow.
            let tail = try MLTensor.elementwise(
                .add, MLTensor(.unary(.neg), [x.elementwise(.abs)]).elementwise(.exp), x.scalar(1))
            return try .elementwise(.add, try .elementwise(.max, x, x.scalar(0)), tail.elementwise(.log))
        }
        ops.append(
            MILOp("softplus_parametric", batch: .leadingAxis, cost: .elementwise) { lowering in
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
            })
        ops.append(
            MILOp("gelu", batch: .elementwise, cost: .transcendental) { lowering in
                let x = try lowering.tensor("x")
                let mode = try lowering.string("mode") ?? "EXACT"
                guard ["EXACT", "TANH_APPROXIMATION", "SIGMOID_APPROXIMATION"].contains(mode) else {
                    throw lowering.invalid("unknown gelu mode '\(mode)'")
                }
                return { args in [try gelu(args[x].asFloat, mode: mode)] }
            })
        ops.append(
            MILOp("prelu", batch: .leadingAxis, cost: .elementwise) { lowering in
                let x = try lowering.tensor("x")
                let alpha = try lowering.tensor("alpha")
                return { args in
                    let v = args[x].asFloat
                    let slope = try v.channelVector(args[alpha].asFloat)
                    return [
                        try .selecting(
                            try .elementwise(.greaterEqual, v, v.scalar(0)), v, try .elementwise(.mul, v, slope))
                    ]
                }
            })
        return ops
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
