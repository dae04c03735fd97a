import TesseraTensor

/// `convolution3d`, `pooling3d` and `globalPooling3d`: the spec-5 layers over the last
/// four axes `[C, D, H, W]` of a rank-5 `[N, C, D, H, W]` blob, lowered onto the ML program
/// 3-D helpers (``MILOp/conv3d(_:weight:bias:_:groups:)``,
/// ``MILOp/pool3d(_:kernel:_:average:excludePadding:)``).
///
/// Padding: `CUSTOM` (the six `customPadding*` fields), `VALID`, or `SAME` (output
/// `ceil(input / stride)`, the odd padding at the back / bottom / right). A 3-D deconvolution
/// (`isDeconvolution`) is the ML program 3-D `conv_transpose`
/// (``MILOp/convTranspose3d(_:weight:bias:_:groups:outputShape:)``): its padding crops the
/// full result, `outputShape` sets the output size.
extension NeuralNetworkLayerType {
    static let volumeLayers: [NeuralNetworkLayerType] = [
        NeuralNetworkLayerType(field: 1471, cost: .convolution) { layer in try convolution3D(&layer) },
        NeuralNetworkLayerType(field: 1465, cost: .elementwise) { layer in
            // Pooling3DLayerParams: type = 1 (MAX, AVERAGE), kernel D/H/W = 2–4, strides
            // D/H/W = 5–7, custom padding front/back/top/bottom/left/right = 8–13,
            // countExcludePadding = 14, paddingType = 15.
            try layer.requireCounts(inputs: 1...1)
            let p = layer.params
            let average = p.int(1) == 1
            let kernel = [2, 3, 4].map { p.int($0) ?? 0 }
            let strides = [5, 6, 7].map { p.int($0) ?? 0 }
            guard kernel.allSatisfy({ $0 >= 1 }), strides.allSatisfy({ $0 >= 1 }) else {
                throw layer.invalid("kernel \(kernel) and strides \(strides) must be positive")
            }
            let geometry = OperationLowering.WindowGeometry(
                strides: strides, dilations: [1, 1, 1], padType: try padType3D(layer, p.int(15) ?? 0),
                pad: (8...13).map { p.int($0) ?? 0 }, kernel: kernel)
            let exclude = p.bool(14)
            return { args in
                let x = args[0].asFloat
                try require(x.rank == 5, "pooling3d needs a rank-5 [N, C, D, H, W] input, got \(x.shape)")
                return [try MILOp.pool3d(x, kernel: kernel, geometry, average: average, excludePadding: exclude)]
            }
        },
        NeuralNetworkLayerType(field: 1466, cost: .reduction) { layer in
            // GlobalPooling3DLayerParams: type = 1 (MAX, AVERAGE), over D, H and W.
            try layer.requireCounts(inputs: 1...1)
            let average = layer.params.int(1) == 1
            return { args in
                let x = args[0].asFloat
                try require(x.rank == 5, "globalPooling3d needs a rank-5 [N, C, D, H, W] input, got \(x.shape)")
                return [
                    average
                        ? x.mean(alongAxes: [2, 3, 4], keepRank: true) : x.max(alongAxes: [2, 3, 4], keepRank: true)
                ]
            }
        },
    ]

    /// A 3-D layer's `PaddingType` (`CUSTOM` = 0, `VALID` = 1, `SAME` = 2) as a window
    /// geometry's `padType`.
    static func padType3D(_ layer: NeuralNetworkLayerLowering, _ value: Int) throws -> String {
        switch value {
        case 0: return "custom"
        case 1: return "valid"
        case 2: return "same"
        default: throw layer.invalid("unknown paddingType \(value)")
        }
    }

    /// `Convolution3DLayerParams`: `outputChannels = 1`, `inputChannels = 2`, `nGroups = 10`,
    /// kernel D/H/W = 20–22, strides = 31–33, dilations = 40–42, `hasBias = 50`,
    /// `weights = 60` (`[O, C/groups, kD, kH, kW]`), `bias = 61`, `paddingType = 70`, custom
    /// padding front/back/top/bottom/left/right = 80–85, `isDeconvolution = 86`,
    /// `outputShape = 87` (`[D_out, H_out, W_out]`, deconvolution only).
    static func convolution3D(_ layer: inout NeuralNetworkLayerLowering) throws -> LoweredCompute {
        try layer.requireCounts(inputs: 1...1)
        let p = layer.params
        let (outputChannels, inputChannels) = (p.int(1) ?? 0, p.int(2) ?? 0)
        let groups = Swift.max(p.int(10) ?? 1, 1)
        let kernel = [20, 21, 22].map { p.int($0) ?? 0 }
        let strides = [31, 32, 33].map { p.int($0) ?? 0 }
        let dilations = [40, 41, 42].map { p.int($0) ?? 0 }
        guard outputChannels >= 1, inputChannels >= 1, inputChannels % groups == 0, outputChannels % groups == 0
        else {
            throw layer.invalid(
                "outputChannels \(outputChannels) and inputChannels \(inputChannels) must be positive multiples of "
                    + "nGroups \(groups)")
        }
        guard (kernel + strides + dilations).allSatisfy({ $0 >= 1 }) else {
            throw layer.invalid("kernel \(kernel), strides \(strides) and dilations \(dilations) must be positive")
        }
        let bias =
            p.bool(50)
            ? layer.constant(try layer.weights(61, count: outputChannels, what: "bias"), shape: [outputChannels]) : nil
        let geometry = OperationLowering.WindowGeometry(
            strides: strides, dilations: dilations, padType: try padType3D(layer, p.int(70) ?? 0),
            pad: (80...85).map { p.int($0) ?? 0 }, kernel: kernel)
        if p.bool(86) {
            return try deconvolution3D(
                &layer, inputChannels: inputChannels, outputChannels: outputChannels, groups: groups, kernel: kernel,
                bias: bias, geometry)
        }
        let shape = [outputChannels, inputChannels / groups] + kernel
        let weight = layer.constant(try layer.weights(60, shape: shape, what: "weights"), shape: shape)
        return { args in
            let x = args[0].asFloat
            try require(
                x.rank == 5 && x.shape[1] == inputChannels,
                "convolution3d needs a rank-5 [N, \(inputChannels), D, H, W] input, got \(x.shape)")
            return [try MILOp.conv3d(x, weight: args[weight], bias: bias.map { args[$0] }, geometry, groups: groups)]
        }
    }

    /// A 3-D deconvolution. The weights are stored `[C, O/groups, kD, kH, kW]`, the transposed
    /// convolution's own layout: coremltools' `add_convolution3d` takes them as
    /// `[O/groups, C, …]` (as the proto's comment describes) and swaps the two axes when it
    /// writes them.
    static func deconvolution3D(
        _ layer: inout NeuralNetworkLayerLowering, inputChannels: Int, outputChannels: Int, groups: Int,
        kernel: [Int], bias: Int?, _ geometry: OperationLowering.WindowGeometry
    ) throws -> LoweredCompute {
        let shape = [inputChannels, outputChannels / groups] + kernel
        let values = try layer.weights(
            60, shape: shape, what: "weights", channelAxis: .second(outer: inputChannels))
        let weight = layer.constant(values, shape: shape)
        let outputShape = try layer.ints(87)
        guard outputShape.isEmpty || outputShape.count == 3 else {
            throw layer.invalid("outputShape must be [D_out, H_out, W_out], got \(outputShape)")
        }
        return { args in
            let x = args[0].asFloat
            try require(
                x.rank == 5 && x.shape[1] == inputChannels,
                "convolution3d needs a rank-5 [N, \(inputChannels), D, H, W] input, got \(x.shape)")
            return [
                try MILOp.convTranspose3d(
                    x, weight: args[weight], bias: bias.map { args[$0] }, geometry, groups: groups,
                    outputShape: outputShape.isEmpty ? nil : [x.shape[0], outputChannels] + outputShape)
            ]
        }
    }
}
