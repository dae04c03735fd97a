import TesseraTensor

/// `batchnorm` (incl. computed statistics and instance normalization), `mvn`,
/// `l2normalize`, `softmax` (axis −3), `softmaxND`, `lrn` and `layerNormalization`.
extension NeuralNetworkLayerType {
    static let normalizationLayers: [NeuralNetworkLayerType] = [
        NeuralNetworkLayerType(field: 160, cost: .elementwise) { layer in try batchnorm(&layer) },
        NeuralNetworkLayerType(field: 165, cost: .transcendental) { layer in
            // MeanVarianceNormalizeLayerParams: acrossChannels = 1, normalizeVariance = 2, epsilon = 3.
            try layer.requireCounts(inputs: 1...1)
            let across = layer.params.bool(1)
            let normalize = layer.params.bool(2)
            let epsilon = nonZero(layer.params.float(3), 1e-6)
            let name = layer.layer.name
            return { args in
                let x = args[0].asFloat
                try require(x.rank >= 3, "\(name): mvn needs rank 3 or more, got \(x.shape)")
                let axes = across ? [-3, -2, -1] : [-2, -1]
                let centred = x - x.mean(alongAxes: axes, keepRank: true)
                guard normalize else { return [centred] }
                return [centred * (centred.squared().mean(alongAxes: axes, keepRank: true) + epsilon).rsqrt()]
            }
        },
        NeuralNetworkLayerType(field: 170, cost: .transcendental) { layer in
            // L2NormalizeLayerParams: epsilon = 1; x / sqrt(sum over [C, H, W] of x² + epsilon).
            try layer.requireCounts(inputs: 1...1)
            let epsilon = nonZero(layer.params.float(1), 1e-6)
            let name = layer.layer.name
            return { args in
                let x = args[0].asFloat
                try require(x.rank >= 3, "\(name): l2normalize needs rank 3 or more, got \(x.shape)")
                return [x * (x.squared().sum(alongAxes: [-3, -2, -1], keepRank: true) + epsilon).rsqrt()]
            }
        },
        NeuralNetworkLayerType(field: 175, cost: .transcendental) { layer in
            try layer.requireCounts(inputs: 1...1)
            let name = layer.layer.name
            return { args in
                let x = args[0].asFloat
                try require(x.rank >= 3, "\(name): softmax needs rank 3 or more ([…, C, H, W]), got \(x.shape)")
                return [x.softmax(alongAxis: x.rank - 3)]
            }
        },
        NeuralNetworkLayerType(field: 950, cost: .transcendental) { layer in
            // SoftmaxNDLayerParams: axis = 1.
            try layer.requireCounts(inputs: 1...1)
            let axis = layer.params.int(1) ?? 0
            return { args in
                let x = args[0].asFloat
                return [x.softmax(alongAxis: try x.axis(axis, op: "softmaxND"))]
            }
        },
        NeuralNetworkLayerType(field: 180, cost: .transcendental) { layer in try lrn(&layer) },
        NeuralNetworkLayerType(field: 1350, cost: .transcendental) { layer in try layerNormalization(&layer) },
    ]

    /// `value`, or `fallback` when it is unset or zero (the proto's "defaults to … if not set
    /// or set to 0").
    static func nonZero(_ value: Float?, _ fallback: Float) -> Float {
        guard let value, value != 0 else { return fallback }
        return value
    }

    /// `BatchnormLayerParams`: `channels = 1`, `computeMeanVar = 5`, `instanceNormalization =
    /// 6`, `epsilon = 10`, `gamma = 15`, `beta = 16`, `mean = 17`, `variance = 18`, along axis
    /// −3. With given statistics the layer folds to one scale and shift per channel at load.
    static func batchnorm(_ layer: inout NeuralNetworkLayerLowering) throws -> LoweredCompute {
        try layer.requireCounts(inputs: 1...1)
        let p = layer.params
        let channels = p.size(1) ?? 0
        guard channels >= 1 else { throw layer.invalid("channels must be positive") }
        let epsilon = p.float(10) ?? 0
        let gamma = try layer.weights(15, count: channels, what: "gamma")
        let beta = try layer.weights(16, count: channels, what: "beta")
        let name = layer.layer.name
        if p.bool(5) {
            let instance = p.bool(6)
            let g = layer.constant(gamma, shape: [channels, 1, 1])
            let b = layer.constant(beta, shape: [channels, 1, 1])
            return { args in
                let (x, leading) = try args[0].asFloat.asImageBatch(layer: name)
                try require(
                    x.shape[1] == channels, "\(name): \(channels) channels for an input of shape \(args[0].shape)")
                let axes = instance ? [2, 3] : [0, 2, 3]
                let mean = x.mean(alongAxes: axes, keepRank: true)
                let centred = x - mean
                let variance = centred.squared().mean(alongAxes: axes, keepRank: true)
                return [(centred * (variance + epsilon).rsqrt() * args[g] + args[b]).restoringLeading(leading)]
            }
        }
        let mean = try layer.weights(17, count: channels, what: "mean")
        let variance = try layer.weights(18, count: channels, what: "variance")
        var scale = [Float](repeating: 0, count: channels)
        var shift = [Float](repeating: 0, count: channels)
        for c in 0..<channels {
            let s = Double(gamma[c]) / (Double(variance[c]) + Double(epsilon)).squareRoot()
            scale[c] = Float(s)
            shift[c] = Float(Double(beta[c]) - Double(mean[c]) * s)
        }
        let s = layer.constant(scale, shape: [channels, 1, 1])
        let t = layer.constant(shift, shape: [channels, 1, 1])
        return { args in
            let x = args[0].asFloat
            try require(
                x.rank >= 3 && x.shape[x.rank - 3] == channels,
                "\(name): \(channels) channels for an input of shape \(x.shape)")
            return [x * args[s] + args[t]]
        }
    }

    /// `LRNLayerParams`: `alpha = 1`, `beta = 2`, `localSize = 3`, `k = 4`:
    /// `x / (k + alpha / localSize · Σ x²)^beta` over a window of channels.
    static func lrn(_ layer: inout NeuralNetworkLayerLowering) throws -> LoweredCompute {
        try layer.requireCounts(inputs: 1...1)
        let p = layer.params
        let (alpha, beta, k) = (p.float(1) ?? 0, p.float(2) ?? 0, p.float(4) ?? 0)
        let size = p.size(3) ?? 0
        guard size >= 1 else { throw layer.invalid("localSize must be positive") }
        let name = layer.layer.name
        return { args in
            let (x, leading) = try args[0].asFloat.asImageBatch(layer: name)
            // Sum of squares over channels c − (size−1)/2 … c + size/2, as a [size, 1] window
            // pool over [N, 1, C, H·W].
            let (n, c, h, w) = (x.shape[0], x.shape[1], x.shape[2], x.shape[3])
            let squares = x.squared().reshapedIfNeeded(to: [n, 1, c, h * w])
            let before = (size - 1) / 2
            let sums =
                squares.pooled2D(
                    .average(countIncludePad: true), kernel: (size, 1), strides: (1, 1),
                    padding: (before, size - 1 - before, 0, 0), ceilMode: false) * Float(size)
            let denominator = (sums.reshapedIfNeeded(to: [n, c, h, w]) * (alpha / Float(size)) + k).pow(beta)
            return [(x / denominator).restoringLeading(leading)]
        }
    }

    /// `LayerNormalizationLayerParams`: `normalizedShape = 1` (the last axes), `eps = 2`,
    /// `gamma = 3`, `beta = 4`.
    static func layerNormalization(_ layer: inout NeuralNetworkLayerLowering) throws -> LoweredCompute {
        try layer.requireCounts(inputs: 1...1)
        let shape = try layer.ints(1)
        guard !shape.isEmpty, shape.allSatisfy({ $0 >= 1 }) else {
            throw layer.invalid("normalizedShape must be positive sizes, got \(shape)")
        }
        let epsilon = layer.params.float(2) ?? 0
        let g = layer.constant(try layer.weights(3, shape: shape, what: "gamma"), shape: shape)
        let b = layer.constant(try layer.weights(4, shape: shape, what: "beta"), shape: shape)
        let name = layer.layer.name
        return { args in
            let x = args[0].asFloat
            try require(
                Array(x.shape.suffix(shape.count)) == shape,
                "\(name): normalizedShape \(shape) does not end the input's shape \(x.shape)")
            let axes = Array((x.rank - shape.count)..<x.rank)
            return [x.layerNorm(alongAxes: axes, epsilon: epsilon) * args[g] + args[b]]
        }
    }
}
