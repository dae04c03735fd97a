import TesseraTensor

/// `unary` (`UnaryFunctionLayerParams`: sqrt, rsqrt, inverse, power, exp, log, abs,
/// threshold after `scale · x + shift`) and the spec-4 one-input math layers (`ceil`,
/// `floor`, `sign`, `round`, `exp2`, the trigonometric and hyperbolic functions, `erf`).
extension NeuralNetworkLayerType {
    static let unaryLayers: [NeuralNetworkLayerType] = {
        var layers = [NeuralNetworkLayerType(field: 220, cost: .transcendental) { layer in try unary(&layer) }]
        let functions: [(Int, @Sendable (MLTensor) -> MLTensor)] = [
            (665, { $0.ceil() }), (670, { $0.floor() }), (680, { $0.sign() }), (685, { $0.round() }),
            (700, { $0.exp2() }), (710, { $0.sin() }), (715, { $0.cos() }), (720, { $0.tan() }),
            (730, { $0.asin() }), (735, { $0.acos() }), (740, { $0.atan() }), (750, { $0.sinh() }),
            (755, { $0.cosh() }), (760, { $0.tanh() }), (770, { $0.asinh() }), (775, { $0.acosh() }),
            (780, { $0.atanh() }), (790, { $0.erf() }),
        ]
        for (field, body) in functions {
            layers.append(
                NeuralNetworkLayerType(field: field, cost: .transcendental) { layer in
                    try layer.requireCounts(inputs: 1...1)
                    return { args in [body(args[0].asFloat)] }
                })
        }
        return layers
    }()

    /// `UnaryFunctionLayerParams`: `type = 1`, `alpha = 2`, `epsilon = 3` (1e-6 when 0),
    /// `shift = 4`, `scale = 5` (1 when 0).
    static func unary(_ layer: inout NeuralNetworkLayerLowering) throws -> LoweredCompute {
        try layer.requireCounts(inputs: 1...1)
        let p = layer.params
        let type = p.int(1) ?? 0
        guard (0...7).contains(type) else { throw layer.invalid("unknown unary function \(type)") }
        let alpha = p.float(2) ?? 0
        let epsilon = nonZero(p.float(3), 1e-6)
        let shift = p.float(4) ?? 0
        let scale = nonZero(p.float(5), 1)
        return { args in
            var x = args[0].asFloat
            if scale != 1 { x = x * scale }
            if shift != 0 { x = x + shift }
            switch type {
            case 0: return [x.squareRoot()]
            case 1: return [(x + epsilon).rsqrt()]
            case 2: return [(x + epsilon).reciprocal()]
            case 3: return [x.pow(alpha)]
            case 4: return [x.exp()]
            // Core ML adds epsilon for LOG too (coremltools writes MIL log(x, epsilon) so).
            case 5: return [(x + epsilon).log()]
            case 6: return [x.abs()]
            default: return [pointwiseMax(x, MLTensor(alpha))]
            }
        }
    }
}
