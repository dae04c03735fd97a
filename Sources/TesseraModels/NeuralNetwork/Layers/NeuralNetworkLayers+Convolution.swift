import TesseraTensor

/// `convolution` (incl. deconvolution, dilation, groups, valid/same padding, a weight input),
/// `pooling` (max, average, L2, global, `includeLastPixel`), `padding` and `upsample`: the
/// spatial layers over the last three axes `[C, H, W]`, every axis before them a batch.
extension NeuralNetworkLayerType {
    static let convolutionLayers: [NeuralNetworkLayerType] = [
        NeuralNetworkLayerType(field: 100, cost: .convolution) { layer in try convolution(&layer) },
        NeuralNetworkLayerType(field: 120, cost: .elementwise) { layer in try pooling(&layer) },
        NeuralNetworkLayerType(field: 200, cost: .dataMovement) { layer in try padding(&layer) },
        NeuralNetworkLayerType(field: 210, cost: .elementwise) { layer in try upsample(&layer) },
    ]

    /// Two values `[H, W]` from a repeated field, `fill` when absent.
    static func pair(_ layer: NeuralNetworkLayerLowering, _ field: Int, default fill: Int, what: String) throws -> [Int]
    {
        let values = try layer.ints(field)
        if values.isEmpty { return [fill, fill] }
        guard values.count == 2, values.allSatisfy({ $0 >= 1 && $0 <= Int(Int32.max) }) else {
            throw layer.invalid("\(what) must be two positive values [H, W] below 2³¹, got \(values)")
        }
        return values
    }

    /// The padding of a convolution or pooling: `ValidPadding { paddingAmounts = 1 }` (as
    /// `custom` pads `[top, bottom, left, right]`) or `SamePadding { asymmetryMode = 1 }`.
    static func windowPadding(
        _ layer: NeuralNetworkLayerLowering, valid: Int, same: Int
    ) throws -> (padType: String, pad: [Int]) {
        if let same = try layer.message(same, "SamePadding") {
            return (same.int(1) == 1 ? "same_lower" : "same", [0, 0, 0, 0])
        }
        guard let valid = try layer.message(valid, "ValidPadding"),
            let amounts = try valid.message(1, "BorderAmounts")
        else { return ("custom", [0, 0, 0, 0]) }
        let edges = try amounts.messages(10, "EdgeSizes")
        guard edges.count == 2 || edges.isEmpty else {
            throw layer.invalid("paddingAmounts needs two edges [H, W], got \(edges.count)")
        }
        return (
            "custom",
            edges.flatMap { [$0.size(1) ?? 0, $0.size(2) ?? 0] } + (edges.isEmpty ? [0, 0, 0, 0] : [])
        )
    }

    /// `ConvolutionLayerParams`: `outputChannels = 1`, `kernelChannels = 2`, `nGroups = 10`,
    /// `kernelSize = 20`, `stride = 30`, `dilationFactor = 40`, `valid = 50` / `same = 51`,
    /// `isDeconvolution = 60`, `hasBias = 70`, `weights = 90`, `bias = 91`, `outputShape = 100`.
    static func convolution(_ layer: inout NeuralNetworkLayerLowering) throws -> LoweredCompute {
        try layer.requireCounts(inputs: 1...2)
        let p = layer.params
        let outputChannels = p.size(1) ?? 0
        let kernelChannels = p.size(2) ?? 0
        let groups = Swift.max(p.size(10) ?? 1, 1)
        let kernel = try pair(layer, 20, default: 3, what: "kernelSize")
        let strides = try pair(layer, 30, default: 1, what: "stride")
        let dilations = try pair(layer, 40, default: 1, what: "dilationFactor")
        let isDeconvolution = p.bool(60)
        let (padType, pad) = try windowPadding(layer, valid: 50, same: 51)
        guard outputChannels >= 1, kernelChannels >= 1 else {
            throw layer.invalid(
                "outputChannels (\(outputChannels)) and kernelChannels (\(kernelChannels)) must be positive")
        }
        guard outputChannels % groups == 0 else {
            throw layer.invalid("outputChannels \(outputChannels) is not a multiple of nGroups \(groups)")
        }
        let bias = p.bool(70) ? try layer.weights(91, count: outputChannels, what: "bias") : nil
        let biasOperand = bias.map { layer.constant($0, shape: [outputChannels]) }
        let geometry = OperationLowering.WindowGeometry(
            strides: strides, dilations: dilations, padType: padType, pad: pad,
            kernel: kernel)
        if isDeconvolution {
            guard layer.inputCount == 1 else { throw layer.unsupported("a deconvolution with a weight input") }
            let shape = [kernelChannels, outputChannels / groups, kernel[0], kernel[1]]
            let values = try layer.weights(
                90, shape: shape, what: "weights", channelAxis: .second(outer: kernelChannels))
            let weight = layer.constant(values, shape: shape)
            let outputShape = try layer.ints(100)
            guard outputShape.isEmpty || outputShape.count == 2 else {
                throw layer.invalid("outputShape must be [H_out, W_out], got \(outputShape)")
            }
            let name = layer.layer.name
            return { args in
                let (x, leading) = try args[0].asFloat.asImageBatch(layer: name)
                let target = outputShape.isEmpty ? nil : [x.shape[0], outputChannels] + outputShape
                let y = try MILOp.convTranspose(
                    x, weight: args[weight], bias: biasOperand.map { args[$0] }, geometry, groups: groups,
                    outputShape: target)
                return [y.restoringLeading(leading)]
            }
        }
        let weight: Int
        if layer.inputCount == 2 {
            weight = 1
        } else {
            let shape = [outputChannels, kernelChannels, kernel[0], kernel[1]]
            weight = layer.constant(try layer.weights(90, shape: shape, what: "weights"), shape: shape)
        }
        let name = layer.layer.name
        return { args in
            let (x, leading) = try args[0].asFloat.asImageBatch(layer: name)
            let y = try MILOp.conv(
                x, weight: args[weight].asFloat, bias: biasOperand.map { args[$0] }, geometry, groups: groups)
            return [y.restoringLeading(leading)]
        }
    }

    /// `PoolingLayerParams`: `type = 1` (MAX, AVERAGE, L2), `kernelSize = 10`, `stride = 20`,
    /// `valid = 30` / `same = 31` / `includeLastPixel = 32 { paddingAmounts = 10 }`,
    /// `avgPoolExcludePadding = 50`, `globalPooling = 60`.
    static func pooling(_ layer: inout NeuralNetworkLayerLowering) throws -> LoweredCompute {
        try layer.requireCounts(inputs: 1...1)
        let p = layer.params
        let type = p.int(1) ?? 0
        guard (0...2).contains(type) else { throw layer.invalid("unknown pooling type \(type)") }
        let name = layer.layer.name
        if p.bool(60) {
            return { args in
                let (x, leading) = try args[0].asFloat.asImageBatch(layer: name)
                let y =
                    switch type {
                    case 0: x.max(alongAxes: [2, 3], keepRank: true)
                    case 1: x.mean(alongAxes: [2, 3], keepRank: true)
                    default: x.squared().sum(alongAxes: [2, 3], keepRank: true).squareRoot()
                    }
                return [y.restoringLeading(leading)]
            }
        }
        let kernel = try pair(layer, 10, default: 3, what: "kernelSize")
        let strides = try pair(layer, 20, default: 1, what: "stride")
        let excludePadding = p.bool(50)
        var ceilMode = false
        var geometry = OperationLowering.WindowGeometry(
            strides: strides, dilations: [1, 1], padType: "custom", pad: [0, 0, 0, 0], kernel: kernel)
        if let complete = try layer.message(32, "ValidCompletePadding") {
            let amounts = try complete.ints(10)
            guard amounts.isEmpty || amounts.count == 2 else {
                throw layer.invalid("includeLastPixel.paddingAmounts must be [H, W], got \(amounts)")
            }
            let (h, w) = amounts.isEmpty ? (0, 0) : (amounts[0], amounts[1])
            geometry.pad = [h, h, w, w]
            ceilMode = true
        } else {
            (geometry.padType, geometry.pad) = try windowPadding(layer, valid: 30, same: 31)
        }
        let (window, isCeil) = (geometry, ceilMode)
        return { args in
            let (x, leading) = try args[0].asFloat.asImageBatch(layer: name)
            let pads = try window.padding(
                input: Array(x.shape.suffix(2)), kernel: kernel, strides: strides, dilations: [1, 1])
            let padding = (pads[0].0, pads[0].1, pads[1].0, pads[1].1)
            let ceilMode = isCeil
            let y: MLTensor
            switch type {
            case 0:
                y = x.pooled2D(
                    .maximum, kernel: (kernel[0], kernel[1]), strides: (strides[0], strides[1]), padding: padding,
                    ceilMode: ceilMode)
            case 1:
                y = x.pooled2D(
                    .average(countIncludePad: !excludePadding), kernel: (kernel[0], kernel[1]),
                    strides: (strides[0], strides[1]), padding: padding, ceilMode: ceilMode)
            default:
                let mean = x.squared().pooled2D(
                    .average(countIncludePad: true), kernel: (kernel[0], kernel[1]),
                    strides: (strides[0], strides[1]), padding: padding, ceilMode: ceilMode)
                y = (mean * Float(kernel[0] * kernel[1])).squareRoot()
            }
            return [y.restoringLeading(leading)]
        }
    }

    /// `PaddingLayerParams`: `constant = 1 { value = 1 }`, `reflection = 2`, `replication =
    /// 3`, `paddingAmounts = 10` (`[H, W]` edges) over the last two axes.
    static func padding(_ layer: inout NeuralNetworkLayerLowering) throws -> LoweredCompute {
        try layer.requireCounts(inputs: 1...1)
        let p = layer.params
        var edges: [(Int, Int)] = [(0, 0), (0, 0)]
        if let amounts = try layer.message(10, "BorderAmounts") {
            let decoded = try amounts.messages(10, "EdgeSizes")
            guard decoded.count == 2 else { throw layer.invalid("paddingAmounts needs two edges [H, W]") }
            edges = decoded.map { ($0.size(1) ?? 0, $0.size(2) ?? 0) }
        }
        let value = try layer.message(1, "PaddingConstant")?.float(1) ?? 0
        let mode = p.has(2) ? 2 : p.has(3) ? 3 : 1
        let pads = edges
        return { args in
            let edges = pads
            let x = args[0].asFloat
            try require(x.rank >= 2, "padding needs an input of rank 2 or more, got \(x.shape)")
            let sizes = [(before: Int, after: Int)](repeating: (0, 0), count: x.rank - 2) + edges.map { ($0.0, $0.1) }
            switch mode {
            case 2:
                try require(
                    zip(x.shape.suffix(2), edges).allSatisfy { $0.1.0 < $0.0 && $0.1.1 < $0.0 },
                    "reflection padding \(edges) must be smaller than the padded axes of \(x.shape)")
                return [x.padded(forSizes: sizes, mode: .reflection)]
            case 3: return [x.edgePadded(forSizes: sizes)]
            default: return [x.padded(forSizes: sizes, with: value)]
            }
        }
    }

    /// `UpsampleLayerParams`: `scalingFactor = 1` or `fractionalScalingFactor = 7` `[H, W]`,
    /// `mode = 5` (NN, BILINEAR), `linearUpsampleMode = 6` (DEFAULT, ALIGN_CORNERS_TRUE,
    /// ALIGN_CORNERS_FALSE) with the grids `NeuralNetwork.proto` gives.
    static func upsample(_ layer: inout NeuralNetworkLayerLowering) throws -> LoweredCompute {
        try layer.requireCounts(inputs: 1...1)
        let p = layer.params
        let integral = try layer.ints(1)
        let fractional = try layer.floats(7)
        let scales: [Double]
        if !fractional.isEmpty {
            guard fractional.count == 2, fractional.allSatisfy({ $0 > 0 }) else {
                throw layer.invalid("fractionalScalingFactor must be two positive values, got \(fractional)")
            }
            scales = fractional.map(Double.init)
        } else {
            guard integral.isEmpty || (integral.count == 2 && integral.allSatisfy { $0 >= 1 }) else {
                throw layer.invalid("scalingFactor must be two positive values, got \(integral)")
            }
            scales = integral.isEmpty ? [1, 1] : integral.map(Double.init)
        }
        let bilinear = p.int(5) == 1
        let linearMode = p.int(6) ?? 0
        return { args in
            let x = args[0].asFloat
            try require(x.rank >= 3, "upsample needs an input of rank 3 or more, got \(x.shape)")
            var y = x
            for (index, axis) in [x.rank - 2, x.rank - 1].enumerated() {
                let size = x.shape[axis]
                let out = try LoweredFunction.computedCount(Double(size) * scales[index], "the upsampled size")
                if bilinear {
                    let grid: [Double] = (0..<out).map { i in
                        let (xin, xout) = (Double(size), Double(out))
                        switch linearMode {
                        case 1: return out > 1 ? Double(i) * (xin - 1) / (xout - 1) : 0
                        case 2:
                            let spacing = xin / xout
                            return Double(i) * spacing + 0.5 * spacing - 0.5
                        default: return out > 1 ? Double(i) * (xin - xin / xout) / (xout - 1) : 0
                        }
                    }
                    y = try MILOp.linearResample(y, axis: axis, grid: grid)
                } else {
                    y = try MILOp.nearest(y, axis: axis, count: out) { Double($0) / scales[index] }
                }
            }
            return [y]
        }
    }
}
