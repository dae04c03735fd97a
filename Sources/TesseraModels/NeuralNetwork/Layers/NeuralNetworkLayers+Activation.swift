import TesseraTensor

/// `activation` with every `ActivationParams` kind (and their parameters), `clampedReLU`,
/// `clip` and `gelu`.
extension NeuralNetworkLayerType {
    static let activationLayers: [NeuralNetworkLayerType] = [
        NeuralNetworkLayerType(field: 130, cost: .transcendental) { layer in try activation(&layer) },
        NeuralNetworkLayerType(field: 1460, cost: .elementwise) { layer in
            // ClampedReLULayerParams: alpha = 1, beta = 2: min(beta, x ≥ 0 ? x : alpha·x).
            try layer.requireCounts(inputs: 1...1)
            let (alpha, beta) = (layer.params.float(1) ?? 0, layer.params.float(2) ?? 0)
            return { args in
                let x = args[0].asFloat
                return [leakyReLU(x, alpha).clamped(to: ...beta)]
            }
        },
        NeuralNetworkLayerType(field: 660, cost: .elementwise) { layer in
            // ClipLayerParams: minVal = 1, maxVal = 2.
            try layer.requireCounts(inputs: 1...1)
            let (low, high) = (layer.params.float(1) ?? 0, layer.params.float(2) ?? 0)
            guard low <= high else { throw layer.invalid("minVal \(low) is greater than maxVal \(high)") }
            return { args in [args[0].asFloat.clamped(to: low...high)] }
        },
        NeuralNetworkLayerType(field: 795, cost: .transcendental) { layer in
            // GeluLayerParams: mode = 1 (EXACT, TANH_APPROXIMATION, SIGMOID_APPROXIMATION).
            try layer.requireCounts(inputs: 1...1)
            let mode = layer.params.int(1) ?? 0
            guard (0...2).contains(mode) else { throw layer.invalid("unknown GELU mode \(mode)") }
            return { args in
                let x = args[0].asFloat
                switch mode {
                case 0: return [x.gelu(approximation: .exact)]
                case 1: return [x.gelu(approximation: .tanh)]
                default: return [x * (x * 1.702).sigmoid()]
                }
            }
        },
    ]

    /// `ActivationParams`: the `NonlinearityType` alternative set (`linear = 5`, `ReLU = 10`,
    /// `leakyReLU = 15`, `thresholdedReLU = 20`, `PReLU = 25`, `tanh = 30`, `scaledTanh =
    /// 31`, `sigmoid = 40`, `sigmoidHard = 41`, `ELU = 50`, `softsign = 60`, `softplus = 70`,
    /// `parametricSoftplus = 71`). Per-channel parameters apply along axis −3.
    static func activation(_ layer: inout NeuralNetworkLayerLowering) throws -> LoweredCompute {
        try layer.requireCounts(inputs: 1...1)
        guard let kind = layer.params.fields.keys.filter({ $0 >= 5 }).max() else {
            throw layer.invalid("the activation sets no NonlinearityType")
        }
        let params = try layer.message(kind, "ActivationParams") ?? ProtobufFieldTable()
        let alpha = params.float(1) ?? 0
        let beta = params.float(2) ?? 0
        switch kind {
        case 5: return { args in [args[0].asFloat * alpha + beta] }
        case 10: return { args in [args[0].asFloat.relu()] }
        case 15: return { args in [leakyReLU(args[0].asFloat, alpha)] }
        case 20:
            return { args in
                let x = args[0].asFloat
                return [x.replacing(with: 0, where: x .< alpha)]
            }
        case 25, 71:
            let first = try channelParameter(layer, params, field: 1, what: "alpha")
            let second = kind == 71 ? try channelParameter(layer, params, field: 2, what: "beta") : nil
            let a = layer.constant(first, shape: first.count == 1 ? [1] : [first.count, 1, 1])
            let b = second.map { layer.constant($0, shape: $0.count == 1 ? [1] : [$0.count, 1, 1]) }
            let name = layer.layer.name
            return { args in
                let x = args[0].asFloat
                try require(
                    first.count == 1 || (x.rank >= 3 && x.shape[x.rank - 3] == first.count),
                    "\(name): \(first.count) per-channel parameters for an input of shape \(x.shape)")
                guard let b else { return [x.relu() + x.clamped(to: ...0) * args[a]] }
                return [args[a] * MILOp.softplus(x * args[b])]
            }
        case 30: return { args in [args[0].asFloat.tanh()] }
        case 31: return { args in [(args[0].asFloat * beta).tanh() * alpha] }
        case 40: return { args in [args[0].asFloat.sigmoid()] }
        case 41: return { args in [(args[0].asFloat * alpha + beta).clamped(to: 0...1)] }
        case 50:
            return { args in
                let x = args[0].asFloat
                return [x.relu() + ((x.clamped(to: ...0)).exp() - 1) * alpha]
            }
        case 60:
            return { args in
                let x = args[0].asFloat
                return [x / (x.abs() + 1)]
            }
        case 70: return { args in [MILOp.softplus(args[0].asFloat)] }
        default: throw layer.unsupported("activation kind \(kind)")
        }
    }

    /// `x` for `x ≥ 0`, `alpha · x` below.
    static func leakyReLU(_ x: MLTensor, _ alpha: Float) -> MLTensor {
        x.relu() + x.clamped(to: ...0) * alpha
    }

    /// A per-channel (or single) activation parameter.
    private static func channelParameter(
        _ layer: NeuralNetworkLayerLowering, _ params: ProtobufFieldTable, field: Int, what: String
    ) throws -> [Float] {
        do {
            guard let weights = try params.message(field, "WeightParams") else {
                throw OperandError("\(what) is missing")
            }
            let values = try NeuralNetworkWeights.floatsOfAnyCount(weights, expectedCount: nil, what: what)
            guard !values.isEmpty else { throw OperandError("\(what) has no values") }
            return values
        } catch let error as OperandError {
            throw layer.invalid(error.message)
        } catch let error as ModelFormatError {
            throw layer.invalid(error.description)
        }
    }
}
