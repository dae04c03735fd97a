import TesseraTensor

/// `reduce` (over C, H, W, HW or CHW, keeping the axes as 1), the spec-4 `reduce*` layers
/// (`axes`, `keepDims`, `reduceAll`), `argMax`, `argMin` and `cumSum`.
extension NeuralNetworkLayerType {
    static let reductionLayers: [NeuralNetworkLayerType] = {
        var layers = [
            NeuralNetworkLayerType(field: 280, cost: .reduction) { layer in try legacyReduce(&layer) },
            NeuralNetworkLayerType(field: 1025, cost: .reduction) { layer in try argReduce(&layer, max: true) },
            NeuralNetworkLayerType(field: 1020, cost: .reduction) { layer in try argReduce(&layer, max: false) },
            NeuralNetworkLayerType(field: 1455, cost: .reduction) { layer in
                // CumSumLayerParams: axis = 1, excludeFinalSum = 2, reverse = 3.
                try layer.requireCounts(inputs: 1...1)
                let axis = layer.params.int(1) ?? 0
                let (exclusive, reverse) = (layer.params.bool(2), layer.params.bool(3))
                return { args in
                    let x = args[0].asFloat
                    return [
                        x.cumulativeSum(
                            alongAxis: try x.axis(axis, op: "cumSum"), exclusive: exclusive, reverse: reverse)
                    ]
                }
            },
        ]
        let kinds: [(Int, @Sendable (MLTensor, [Int]) -> MLTensor)] = [
            (1250, { $0.abs().sum(alongAxes: $1, keepRank: true) }),
            (1255, { $0.squared().sum(alongAxes: $1, keepRank: true).squareRoot() }),
            (1260, { $0.max(alongAxes: $1, keepRank: true) }),
            (1265, { $0.min(alongAxes: $1, keepRank: true) }),
            (1270, { $0.sum(alongAxes: $1, keepRank: true) }),
            (1275, { $0.product(alongAxes: $1, keepRank: true) }),
            (1280, { $0.mean(alongAxes: $1, keepRank: true) }),
            (1285, { $0.sum(alongAxes: $1, keepRank: true).log() }),
            (1290, { $0.squared().sum(alongAxes: $1, keepRank: true) }),
            (1295, { $0.logSumExp(alongAxes: $1, keepRank: true) }),
        ]
        for (field, body) in kinds {
            layers.append(
                NeuralNetworkLayerType(field: field, cost: .reduction) { layer in
                    // Reduce*LayerParams: axes = 1, keepDims = 2, reduceAll = 3.
                    try layer.requireCounts(inputs: 1...1)
                    let axes = try layer.ints(1)
                    let keep = layer.params.bool(2)
                    let all = layer.params.bool(3) || axes.isEmpty
                    let name = layer.layer.typeName
                    return { args in
                        let x = args[0].asFloat
                        let normalized = all ? Array(0..<x.rank) : try x.axes(axes, op: name)
                        let y = body(x, normalized)
                        if keep { return [y] }
                        let shape = y.shape.enumerated().filter { !normalized.contains($0.offset) }.map(\.element)
                        return [y.reshapedIfNeeded(to: shape.isEmpty ? [1] : shape)]
                    }
                })
        }
        return layers
    }()

    /// `ReduceLayerParams`: `mode = 1` (SUM, AVG, PROD, LOGSUM, SUMSQUARE, L1, L2, MAX, MIN,
    /// ARGMAX), `epsilon = 2` (for LOGSUM, 1e-6 when 0), `axis = 3` (CHW, HW, C, H, W).
    static func legacyReduce(_ layer: inout NeuralNetworkLayerLowering) throws -> LoweredCompute {
        try layer.requireCounts(inputs: 1...1)
        let mode = layer.params.int(1) ?? 0
        let epsilon = nonZero(layer.params.float(2), 1e-6)
        let axisCode = layer.params.int(3) ?? 0
        let fromEnd: [Int]
        switch axisCode {
        case 0: fromEnd = [3, 2, 1]
        case 1: fromEnd = [2, 1]
        case 2: fromEnd = [3]
        case 3: fromEnd = [2]
        case 4: fromEnd = [1]
        default: throw layer.invalid("unknown reduce axis \(axisCode)")
        }
        guard (0...9).contains(mode) else { throw layer.invalid("unknown reduce mode \(mode)") }
        guard mode != 9 || fromEnd.count == 1 else { throw layer.invalid("ARGMAX reduces one axis (C, H or W) only") }
        let name = layer.layer.name
        return { args in
            let x = args[0].asFloat
            try require(x.rank >= fromEnd.max()!, "\(name): reduce over axes -\(fromEnd) of \(x.shape)")
            let axes = fromEnd.map { x.rank - $0 }
            switch mode {
            case 0: return [x.sum(alongAxes: axes, keepRank: true)]
            case 1: return [x.mean(alongAxes: axes, keepRank: true)]
            case 2: return [x.product(alongAxes: axes, keepRank: true)]
            case 3: return [(x + epsilon).log().sum(alongAxes: axes, keepRank: true)]
            case 4: return [x.squared().sum(alongAxes: axes, keepRank: true)]
            case 5: return [x.abs().sum(alongAxes: axes, keepRank: true)]
            case 6: return [x.squared().sum(alongAxes: axes, keepRank: true).squareRoot()]
            case 7: return [x.max(alongAxes: axes, keepRank: true)]
            case 8: return [x.min(alongAxes: axes, keepRank: true)]
            default: return [x.argmax(alongAxis: axes[0], keepRank: true).cast(to: Float.self)]
            }
        }
    }

    /// `ArgMaxLayerParams` / `ArgMinLayerParams`: `axis = 1`, `removeDim = 2`; the indices
    /// as Float32.
    static func argReduce(_ layer: inout NeuralNetworkLayerLowering, max: Bool) throws -> LoweredCompute {
        try layer.requireCounts(inputs: 1...1)
        let axis = layer.params.int(1) ?? 0
        let remove = layer.params.bool(2)
        return { args in
            let x = args[0].asFloat
            let a = try x.axis(axis, op: max ? "argMax" : "argMin")
            let keep = !remove || x.rank == 1
            let y = max ? x.argmax(alongAxis: a, keepRank: keep) : x.argmin(alongAxis: a, keepRank: keep)
            return [y.cast(to: Float.self)]
        }
    }
}
