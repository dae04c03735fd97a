import TesseraTensor

/// The random layers: `randomNormal*`, `randomUniform*`, `randomBernoulli*` in their `Like`
/// (the input's shape), `Static` (`outputShape`) and `Dynamic` (the input's values are the
/// shape) forms, and `categoricalDistribution`. Results are Float32.
///
/// Seeds follow the ML program random ops (`MILOps+Random.swift`): a negative seed (what
/// coremltools writes by default, −1) draws fresh values every prediction; a seed ≥ 0 gives
/// the same values every prediction, on any machine (Tessera's Philox stream keyed by the
/// seed). Core ML does not specify its generator, so a seeded layer gives other values than on
/// Apple's devices, with the same distribution; the fixtures check moments and bounds.
extension NeuralNetworkLayerType {
    static let randomLayers: [NeuralNetworkLayerType] =
        [
            // (field of the Like form, its parameter layout)
            (1170, RandomKind.normal), (1190, .uniform), (1210, .bernoulli),
        ].flatMap { like, kind in
            [
                randomLayer(field: like, kind: kind, shape: .like),
                randomLayer(field: like + 5, kind: kind, shape: .static),
                randomLayer(field: like + 10, kind: kind, shape: .dynamic),
            ]
        } + [
            NeuralNetworkLayerType(field: 1230, cost: .elementwise) { layer in
                // CategoricalDistributionLayerParams: seed = 1, numSamples = 2, isLogits = 3,
                // eps = 4, temperature = 5. The last axis holds the classes and becomes
                // numSamples class indices (MILOp.categoricalSamples, as random_categorical).
                try layer.requireCounts(inputs: 1...1)
                let seed = layer.params.int64(1).flatMap { $0 >= 0 ? UInt64($0) : nil }
                let samples = layer.params.int(2) ?? 1
                let isLogits = layer.params.bool(3)
                let temperature = layer.params.float(5).flatMap { $0 == 0 ? nil : $0 } ?? 1
                guard samples >= 1 else { throw layer.invalid("numSamples \(samples) must be positive") }
                return { args in
                    [
                        try MILOp.categoricalSamples(
                            args[0], name: "input", logits: isLogits, temperature: temperature, samples: samples,
                            seed: seed)
                    ]
                }
            }
        ]

    /// Which distribution a random layer draws from; its parameters are fields 2 and 3.
    enum RandomKind {
        /// `mean` = 2, `stdDev` = 3.
        case normal
        /// `minVal` = 2, `maxVal` = 3.
        case uniform
        /// `prob` = 2: 1 with that probability, else 0.
        case bernoulli
    }

    /// Where a random layer's output shape comes from.
    enum RandomShape {
        /// The input's shape.
        case like
        /// The `outputShape` field (4, or 3 for Bernoulli).
        case `static`
        /// The input's values.
        case dynamic
    }

    /// One random layer type: `seed` = 1, then the distribution's parameters.
    /// An absent parameter is 0 (proto3 does not write zeros).
    static func randomLayer(field: Int, kind: RandomKind, shape source: RandomShape) -> NeuralNetworkLayerType {
        NeuralNetworkLayerType(
            field: field, cost: kind == .normal ? .transcendental : .elementwise,
            valueReads: source == .dynamic ? [0] : []
        ) { layer in
            try layer.requireCounts(inputs: source == .static ? 0...0 : 1...1)
            let seed = layer.params.int64(1).flatMap { $0 >= 0 ? UInt64($0) : nil }
            let (first, second) = (layer.params.float(2), layer.params.float(3))
            let staticShape = source == .static ? try layer.ints(kind == .bernoulli ? 3 : 4) : []
            if source == .static {
                guard !staticShape.isEmpty, (try? MILOp.randomShape(staticShape)) != nil else {
                    throw layer.invalid("outputShape \(staticShape) must be non-empty and not too large")
                }
            }
            return { args in
                let dimensions: [Int]
                switch source {
                case .like: dimensions = try MILOp.randomShape(args[0].shape)
                case .static: dimensions = try MILOp.randomShape(staticShape)
                case .dynamic:
                    dimensions = try MILOp.randomShape(try RuntimeInts.operand(0).values(args))
                }
                switch kind {
                case .normal:
                    let samples = MLTensor(
                        randomNormal: dimensions, mean: 0, standardDeviation: 1, seed: seed, scalarType: Float.self)
                    return [samples * (second ?? 0) + (first ?? 0)]
                case .uniform:
                    let (low, high) = (first ?? 0, second ?? 0)
                    let u = MLTensor(randomUniform: dimensions, in: 0..<1, seed: seed, scalarType: Float.self)
                    return [u * (high - low) + low]
                case .bernoulli:
                    let u = MLTensor(randomUniform: dimensions, in: 0..<1, seed: seed, scalarType: Float.self)
                    // u < p holds with probability p: never for p = 0, always for p = 1.
                    return [(u .< u.scalar(Double(first ?? 0))).asFloat]
                }
            }
        }
    }
}
