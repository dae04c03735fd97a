import TesseraTensor

/// Activation functions, each defined by its MIL docstring, on the public `MLTensor` API and
/// Tessera's documented extensions (`relu`, `silu`, `gelu`, `sigmoid`).
extension MILOp {
    static let activationOps: [MILOp] = {
        var ops: [MILOp] = []
        /// An element-wise activation of `x` (in Float32) and optional scalar `alpha`/`beta`.
        func activation(
            _ name: String, cost: MILOpCost = .elementwise, alpha: Double? = nil, beta: Double? = nil,
            _ body: @escaping @Sendable (MLTensor, Float, Float) -> MLTensor
        ) {
            ops.append(
                MILOp(name, batch: .elementwise, cost: cost) { lowering in
                    let x = try lowering.tensor("x")
                    let a = Float(try lowering.double("alpha") ?? alpha ?? 0)
                    let b = Float(try lowering.double("beta") ?? beta ?? 0)
                    return { args in [body(args[x].asFloat, a, b)] }
                })
        }
        // `max(x, bound)` first, as the convolution epilogue expects (see `ExecutionPlan`).
        activation("relu") { x, _, _ in x.relu() }
        activation("relu6") { x, _, _ in x.clamped(to: 0...6) }
        activation("clip") { x, alpha, beta in x.clamped(to: alpha...).clamped(to: ...beta) }
        activation("threshold") { x, alpha, _ in x.clamped(to: alpha...) }
        activation("leaky_relu", alpha: 0.01) { x, alpha, _ in (x * alpha).replacing(with: x, where: x .>= 0) }
        activation("elu", alpha: 1) { x, alpha, _ in ((x.exp() - 1) * alpha).replacing(with: x, where: x .> 0) }
        activation("thresholded_relu", alpha: 1) { x, alpha, _ in x.replacing(with: 0, where: .!(x .>= alpha)) }
        activation("linear_activation") { x, alpha, beta in x * alpha + beta }
        activation("scaled_tanh", alpha: 1, beta: 1) { x, alpha, beta in (x * beta).tanh() * alpha }
        activation("sigmoid_hard", alpha: 0.2, beta: 0.5) { x, alpha, beta in (x * alpha + beta).clamped(to: 0...1) }
        activation("clamped_relu", alpha: 0, beta: 6) { x, alpha, beta in
            (x * alpha).clamped(to: ...beta).replacing(with: x.clamped(to: ...beta), where: x .>= 0)
        }
        activation("silu", cost: .transcendental) { x, _, _ in x.silu() }
        activation("softsign") { x, _, _ in x / (x.abs() + 1) }
        activation("softplus") { x, _, _ in softplus(x) }
        ops.append(
            MILOp("softplus_parametric", batch: .leadingAxis, cost: .elementwise) { lowering in
                let x = try lowering.tensor("x")
                let alpha = try lowering.tensor("alpha")
                let beta = try lowering.tensor("beta")
                return { args in
                    // alpha[C] · log(1 + exp(beta[C] · x)), per channel (axis 1).
                    let v = args[x].asFloat
                    return [
                        softplus(v * (try v.channelVector(args[beta].asFloat)))
                            * (try v.channelVector(args[alpha].asFloat))
                    ]
                }
            })
        ops.append(
            MILOp("gelu", batch: .elementwise, cost: .transcendental) { lowering in
                let x = try lowering.tensor("x")
                let gelu: @Sendable (MLTensor) -> MLTensor
                switch try lowering.string("mode") ?? "EXACT" {
                case "EXACT": gelu = { $0.gelu(approximation: .exact) }
                case "TANH_APPROXIMATION": gelu = { $0.gelu(approximation: .tanh) }
                case "SIGMOID_APPROXIMATION": gelu = { $0 * ($0 * 1.702).sigmoid() }
                case let mode: throw lowering.invalid("unknown gelu mode '\(mode)'")
                }
                return { args in [gelu(args[x].asFloat)] }
            })
        ops.append(
            MILOp("prelu", batch: .leadingAxis, cost: .elementwise) { lowering in
                let x = try lowering.tensor("x")
                let alpha = try lowering.tensor("alpha")
                return { args in
                    let v = args[x].asFloat
                    return [(v * (try v.channelVector(args[alpha].asFloat))).replacing(with: v, where: v .>= 0)]
                }
            })
        return ops
    }()

    /// `log(1 + exp(x))` as `max(x, 0) + log(1 + exp(-|x|))`, which does not overflow.
    static func softplus(_ x: MLTensor) -> MLTensor {
        x.relu() + ((-x.abs()).exp() + 1).log()
    }
}
