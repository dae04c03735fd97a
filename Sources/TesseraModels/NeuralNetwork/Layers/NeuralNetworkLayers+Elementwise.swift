import TesseraTensor

/// The element-wise layers with NumPy broadcasting: `add`, `multiply`, `average`, `max`,
/// `min` (any number of inputs, or one input and `alpha`), `dot`, `scale`, `bias`, the
/// spec-4 `*Broadcastable` arithmetic, the comparisons and the logical layers. Comparisons
/// and logical layers give Float32 0 and 1, as every NeuralNetwork blob is a float blob.
extension NeuralNetworkLayerType {
    static let elementwiseLayers: [NeuralNetworkLayerType] = {
        var layers: [NeuralNetworkLayerType] = []
        /// A variadic legacy layer: folds its inputs with `body`; with one input, applies it
        /// to `alpha` (AddLayerParams/MultiplyLayerParams `alpha = 1`) when `alpha` is given.
        func variadic(_ field: Int, alpha: Bool, _ body: @escaping @Sendable (MLTensor, MLTensor) -> MLTensor) {
            layers.append(
                NeuralNetworkLayerType(field: field, cost: .elementwise) { layer in
                    try layer.requireCounts(inputs: 1...Int.max)
                    let constant = layer.params.float(1) ?? 0
                    let count = layer.inputCount
                    guard count >= 2 || alpha else { throw layer.invalid("needs two or more inputs") }
                    return { args in
                        var y = args[0].asFloat
                        if count == 1 { return [body(y, MLTensor(constant))] }
                        for index in 1..<count { y = body(y, args[index].asFloat) }
                        return [y]
                    }
                })
        }
        variadic(230, alpha: true) { $0 + $1 }
        variadic(231, alpha: true) { $0 * $1 }
        variadic(260, alpha: false) { pointwiseMax($0, $1) }
        variadic(261, alpha: false) { pointwiseMin($0, $1) }
        layers.append(
            NeuralNetworkLayerType(field: 240, cost: .elementwise) { layer in
                try layer.requireCounts(inputs: 2...Int.max)
                let count = layer.inputCount
                return { args in
                    var y = args[0].asFloat
                    for index in 1..<count { y = y + args[index].asFloat }
                    return [y / Float(count)]
                }
            })

        /// A two-input spec-4 layer with NumPy broadcasting.
        func broadcastable(_ field: Int, _ body: @escaping @Sendable (MLTensor, MLTensor) -> MLTensor) {
            layers.append(
                NeuralNetworkLayerType(field: field, cost: .elementwise) { layer in
                    try layer.requireCounts(inputs: 2...2)
                    return { args in [body(args[0].asFloat, args[1].asFloat)] }
                })
        }
        broadcastable(865) { $0 % $1 }  // modBroadcastable
        broadcastable(870) { pointwiseMin($0, $1) }
        broadcastable(875) { pointwiseMax($0, $1) }
        broadcastable(880) { $0 + $1 }
        broadcastable(885) { $0.pow($1) }
        broadcastable(890) { $0 / $1 }
        broadcastable(895) { ($0 / $1).floor() }
        broadcastable(900) { $0 * $1 }
        broadcastable(905) { $0 - $1 }

        /// A comparison: two inputs, or one and `alpha` (field `alphaField`).
        func comparison(_ field: Int, alphaField: Int, _ body: @escaping @Sendable (MLTensor, MLTensor) -> MLTensor) {
            layers.append(
                NeuralNetworkLayerType(field: field, cost: .elementwise) { layer in
                    try layer.requireCounts(inputs: 1...2)
                    let alpha = layer.params.float(alphaField) ?? 0
                    let count = layer.inputCount
                    return { args in
                        let a = args[0].asFloat
                        let b = count == 2 ? args[1].asFloat : MLTensor(alpha)
                        return [body(a, b).cast(to: Float.self)]
                    }
                })
        }
        comparison(815, alphaField: 1) { $0 .== $1 }
        comparison(820, alphaField: 1) { $0 .!= $1 }
        comparison(825, alphaField: 2) { $0 .< $1 }
        comparison(827, alphaField: 2) { $0 .<= $1 }
        comparison(830, alphaField: 2) { $0 .> $1 }
        comparison(832, alphaField: 2) { $0 .>= $1 }

        /// A logical layer over inputs read as booleans (non-zero is true).
        func logical(_ field: Int, _ body: @escaping @Sendable (MLTensor, MLTensor) -> MLTensor) {
            layers.append(
                NeuralNetworkLayerType(field: field, cost: .elementwise) { layer in
                    try layer.requireCounts(inputs: 2...2)
                    return { args in
                        [body(args[0].asFloat .!= Float(0), args[1].asFloat .!= Float(0)).cast(to: Float.self)]
                    }
                })
        }
        logical(840) { $0 .| $1 }
        logical(845) { $0 .^ $1 }
        logical(855) { $0 .& $1 }
        layers.append(
            NeuralNetworkLayerType(field: 850, cost: .elementwise) { layer in
                try layer.requireCounts(inputs: 1...1)
                return { args in [(args[0].asFloat .== Float(0)).cast(to: Float.self)] }
            })
        layers += [
            NeuralNetworkLayerType(field: 270, cost: .reduction) { layer in try dot(&layer) },
            NeuralNetworkLayerType(field: 245, cost: .elementwise) { layer in try scale(&layer) },
            NeuralNetworkLayerType(field: 250, cost: .elementwise) { layer in
                // BiasLayerParams: shape = 1, bias = 2.
                try layer.requireCounts(inputs: 1...1)
                let shape = try parameterShape(layer, field: 1, what: "shape")
                let b = layer.constant(try layer.weights(2, shape: shape, what: "bias"), shape: shape)
                return { args in [args[0].asFloat + args[b]] }
            },
        ]
        return layers
    }()

    /// A `scale`/`bias` parameter's `[C, H, W]`-relative shape: `[1]` (a scalar), `[C]` (as
    /// `[C, 1, 1]`), `[1, H, W]` or `[C, H, W]`.
    static func parameterShape(_ layer: NeuralNetworkLayerLowering, field: Int, what: String) throws -> [Int] {
        let shape = try layer.ints(field)
        switch shape.count {
        case 0: return [1]
        case 1: return shape[0] == 1 ? [1] : [shape[0], 1, 1]
        case 3: return shape
        default: throw layer.invalid("\(what) must be [1], [C], [1, H, W] or [C, H, W], got \(shape)")
        }
    }

    /// `ScaleLayerParams`: `shapeScale = 1`, `scale = 2`, `hasBias = 3`, `shapeBias = 4`,
    /// `bias = 5`; a second input, when given, is the scale.
    static func scale(_ layer: inout NeuralNetworkLayerLowering) throws -> LoweredCompute {
        try layer.requireCounts(inputs: 1...2)
        let scaleOperand: Int
        if layer.inputCount == 2 {
            scaleOperand = 1
        } else {
            let shape = try parameterShape(layer, field: 1, what: "shapeScale")
            scaleOperand = layer.constant(try layer.weights(2, shape: shape, what: "scale"), shape: shape)
        }
        var biasOperand: Int?
        if layer.params.bool(3) {
            let shape = try parameterShape(layer, field: 4, what: "shapeBias")
            biasOperand = layer.constant(try layer.weights(5, shape: shape, what: "bias"), shape: shape)
        }
        let bias = biasOperand
        return { args in
            let y = args[0].asFloat * args[scaleOperand].asFloat
            return [bias.map { y + args[$0] } ?? y]
        }
    }

    /// `DotProductLayerParams`: `cosineSimilarity = 1`; the dot product over axis −3 of two
    /// `[…, C, 1, 1]` inputs, giving `[…, 1, 1, 1]`.
    static func dot(_ layer: inout NeuralNetworkLayerLowering) throws -> LoweredCompute {
        try layer.requireCounts(inputs: 2...2)
        let cosine = layer.params.bool(1)
        let name = layer.layer.name
        return { args in
            let (a, b) = (args[0].asFloat, args[1].asFloat)
            try require(
                a.rank >= 3 && b.shape == a.shape,
                "\(name): dot needs two equal shapes of rank ≥ 3, got \(a.shape) and \(b.shape)")
            let axis = a.rank - 3
            let product = (a * b).sum(alongAxes: [axis], keepRank: true)
            guard cosine else { return [product] }
            let norms =
                (a.squared().sum(alongAxes: [axis], keepRank: true) * b.squared().sum(alongAxes: [axis], keepRank: true))
                .squareRoot()
            return [product / norms]
        }
    }
}
