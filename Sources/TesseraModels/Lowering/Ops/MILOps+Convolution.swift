import TesseraTensor

/// `conv`, `conv_transpose`, `max_pool` and `avg_pool`. 1-D ops run as 2-D ones with a height
/// of 1; padding is resolved per prediction, since `same` depends on the input size.
extension MILOp {
    static let convolutionOps: [MILOp] = [
        MILOp("conv", batch: .leadingAxis, cost: .convolution) { lowering in
            let x = try lowering.tensor("x")
            let weight = try lowering.tensor("weight")
            let bias = try lowering.optionalTensor("bias")
            let geometry = try lowering.windowGeometry()
            let groups = try lowering.int("groups") ?? 1
            guard groups >= 1 else { throw lowering.invalid("groups must be positive, got \(groups)") }
            if let rank = lowering.declaredType("weight")?.rank, rank > 5 {
                throw lowering.unsupported("\(rank - 2)-D convolution")
            }
            return { args in
                [
                    try conv(
                        args[x].asFloat, weight: args[weight].asFloat, bias: bias.map { args[$0].asFloat }, geometry,
                        groups: groups)
                ]
            }
        },
        MILOp("conv_transpose", batch: .leadingAxis, cost: .transposedConvolution) { lowering in
            let x = try lowering.tensor("x")
            let groups = try lowering.int("groups") ?? 1
            guard groups >= 1 else { throw lowering.invalid("groups must be positive, got \(groups)") }
            if let rank = lowering.declaredType("weight")?.rank, rank > 5 {
                throw lowering.unsupported("\(rank - 2)-D transposed convolution")
            }
            // A constant weight is rearranged for the convolution once, here.
            let packed = lowering.packedTransposeWeight(groups: groups)
            let weight =
                try packed.map { lowering.appendOperand(slot: try lowering.context.literalSlot($0)) }
                ?? lowering.tensor("weight")
            let bias = try lowering.optionalTensor("bias")
            let geometry = try lowering.windowGeometry()
            let outputShape = try lowering.ints("output_shape")
            return { args in
                [
                    try convTranspose(
                        args[x].asFloat, weight: args[weight].asFloat, bias: bias.map { args[$0].asFloat }, geometry,
                        groups: groups, outputShape: outputShape, prepacked: packed != nil)
                ]
            }
        },
        MILOp("max_pool", batch: .leadingAxis, cost: .elementwise, lower: poolHandler(average: false)),
        MILOp("avg_pool", batch: .leadingAxis, cost: .elementwise, lower: poolHandler(average: true)),
    ]

    /// A convolution of a rank-3 (1-D) or rank-4 (2-D) input; the convolution's rule reports
    /// channels, groups, a bias or a kernel that do not fit.
    static func conv(
        _ x: MLTensor, weight: MLTensor, bias: MLTensor?, _ geometry: OperationLowering.WindowGeometry, groups: Int
    ) throws -> MLTensor {
        if x.rank == 5 { return try conv3d(x, weight: weight, bias: bias, geometry, groups: groups) }
        try require(x.rank == 3 || x.rank == 4, "Tessera runs 1-D, 2-D and 3-D convolutions; the input is \(x.shape)")
        try require(weight.rank == x.rank, "weight \(weight.shape) and input \(x.shape) ranks differ")
        let spatial = x.rank - 2
        let strides = geometry.strides ?? [Int](repeating: 1, count: spatial)
        let dilations = geometry.dilations ?? [Int](repeating: 1, count: spatial)
        try require(strides.count == spatial && dilations.count == spatial, "strides/dilations need \(spatial) values")
        let pads = try geometry.padding(
            input: Array(x.shape.suffix(spatial)), kernel: Array(weight.shape.suffix(spatial)), strides: strides,
            dilations: dilations)
        // 1-D: [N, C, L] as [N, C, 1, L].
        let x4 = spatial == 2 ? x : x.expandingShape(at: 2)
        let w4 = spatial == 2 ? weight : weight.expandingShape(at: 2)
        let p = pads.count == 2 ? pads : [(0, 0), pads[0]]
        let y = x4.convolved2D(
            weight: w4, bias: bias.map { $0.reshapedIfNeeded(to: [$0.scalarCount]) },
            strides: spatial == 2 ? (strides[0], strides[1]) : (1, strides[0]),
            dilations: spatial == 2 ? (dilations[0], dilations[1]) : (1, dilations[0]),
            padding: (p[0].0, p[0].1, p[1].0, p[1].1), groups: groups)
        return spatial == 2 ? y : y.squeezingShape(at: 2)
    }

    /// A transposed convolution, as a stride-1 convolution of the input with zeros inserted
    /// between its elements and padded by the dilated kernel size, with the weight's channel
    /// axes swapped (per group) and its taps reversed; the full result is then cropped by the
    /// padding (or to `outputShape`).
    ///
    /// With `prepacked`, `weight` is already the convolution's `[C_out, C_in/groups, kH, kW]`
    /// weight with reversed taps (see ``packedTransposeWeight(groups:)``).
    static func convTranspose(
        _ x: MLTensor, weight: MLTensor, bias: MLTensor?, _ geometry: OperationLowering.WindowGeometry, groups: Int,
        outputShape: [Int]?,
        prepacked: Bool = false
    ) throws -> MLTensor {
        if x.rank == 5 && !prepacked {
            return try convTranspose3d(
                x, weight: weight, bias: bias, geometry, groups: groups, outputShape: outputShape)
        }
        try require(
            x.rank == 3 || x.rank == 4,
            "Tessera runs 1-D, 2-D and 3-D transposed convolutions; the input is \(x.shape)")
        try require(
            prepacked ? weight.rank == 4 : weight.rank == x.rank,
            "weight \(weight.shape) and input \(x.shape) ranks differ")
        let spatial = x.rank - 2
        // Work in 2-D: [N, C, L] as [N, C, 1, L].
        let x4 = spatial == 2 ? x : x.expandingShape(at: 2)
        let w4 = spatial == 2 || prepacked ? weight : weight.expandingShape(at: 2)
        func pair(_ values: [Int]?, _ fill: Int) throws -> [Int] {
            let v = values ?? [Int](repeating: fill, count: spatial)
            try require(v.count == spatial, "\(v) needs \(spatial) values")
            return spatial == 2 ? v : [1] + v
        }
        let strides = try pair(geometry.strides, 1)
        let dilations = try pair(geometry.dilations, 1)
        let (n, cIn, h, w) = (x4.shape[0], x4.shape[1], x4.shape[2], x4.shape[3])
        let (kh, kw) = (w4.shape[2], w4.shape[3])
        try require(
            cIn % groups == 0 && (prepacked ? w4.shape[1] * groups == cIn : w4.shape[0] == cIn),
            "weight \(weight.shape) does not fit \(cIn) input channels in \(groups) groups")
        let cOut = prepacked ? w4.shape[0] : w4.shape[1] * groups
        try require(h > 0 && w > 0 && cIn > 0 && kh > 0 && kw > 0, "empty input \(x.shape) or kernel \(weight.shape)")
        // Zeros between input elements: [N, C, H, 1, W, 1] padded to [N, C, H, s, W, s].
        var dilated = x4.reshapedIfNeeded(to: [n, cIn, h, 1, w, 1])
        if strides != [1, 1] {
            dilated = dilated.padded(
                forSizes: [(0, 0), (0, 0), (0, 0), (0, strides[0] - 1), (0, 0), (0, strides[1] - 1)], with: 0)
            dilated = dilated.reshapedIfNeeded(to: [n, cIn, h * strides[0], w * strides[1]])
                .sliced(
                    starts: [0, 0, 0, 0], steps: [1, 1, 1, 1],
                    counts: [n, cIn, (h - 1) * strides[0] + 1, (w - 1) * strides[1] + 1])
        } else {
            dilated = dilated.reshapedIfNeeded(to: [n, cIn, h, w])
        }
        let (eh, ew) = ((kh - 1) * dilations[0], (kw - 1) * dilations[1])
        let padded = dilated.padded(forSizes: [(0, 0), (0, 0), (eh, eh), (ew, ew)], with: 0)
        // [Cin, Cout/g, kH, kW] → [g, Cout/g, Cin/g, kH, kW] → [Cout, Cin/g, kH, kW], taps reversed.
        let flipped: MLTensor
        if prepacked {
            flipped = w4
        } else {
            let perGroup = w4.reshapedIfNeeded(to: [groups, cIn / groups, cOut / groups, kh, kw])
                .transposed(permutation: [0, 2, 1, 3, 4])
            flipped = perGroup.reshapedIfNeeded(to: [cOut, cIn / groups, kh, kw])
                .sliced(starts: [0, 0, kh - 1, kw - 1], steps: [1, 1, -1, -1], counts: [cOut, cIn / groups, kh, kw])
        }
        let full = padded.convolved2D(
            weight: flipped, bias: bias.map { $0.reshapedIfNeeded(to: [$0.scalarCount]) },
            dilations: (dilations[0], dilations[1]), groups: groups)
        guard full.rank == 4 else { return full }  // the convolution's rule failed; the scope reports it
        // Crop: custom/valid padding, `same` (TF's rule), or an explicit output shape.
        let fullSize = [full.shape[2], full.shape[3]]
        var before = [0, 0]
        var sizes = fullSize
        switch geometry.padType {
        case "custom":
            let pad = geometry.pad ?? [Int](repeating: 0, count: 2 * spatial)
            try require(pad.count == 2 * spatial, "pad \(pad) needs two values per spatial axis")
            let p = spatial == 2 ? pad : [0, 0] + pad
            before = [p[0], p[2]]
            sizes = [fullSize[0] - p[0] - p[1], fullSize[1] - p[2] - p[3]]
        case "same", "same_lower":
            let target = [h * strides[0], w * strides[1]]
            for i in 0..<2 {
                let total = Swift.max(0, fullSize[i] - target[i])
                before[i] = geometry.padType == "same" ? total / 2 : total - total / 2
                sizes[i] = target[i]
            }
        default: break
        }
        if let outputShape {
            try require(outputShape.count == x.rank, "output_shape \(outputShape) needs \(x.rank) values")
            sizes = spatial == 2 ? Array(outputShape.suffix(2)) : [1, outputShape[2]]
        }
        try require(sizes.allSatisfy { $0 >= 0 } && before.allSatisfy { $0 >= 0 }, "padding larger than the output")
        // Sizes past the full result (output padding) are zeros.
        let extra = [
            Swift.max(0, before[0] + sizes[0] - fullSize[0]), Swift.max(0, before[1] + sizes[1] - fullSize[1]),
        ]
        var result = full
        if extra != [0, 0] {
            let sizes: [(before: Int, after: Int)] = [(0, 0), (0, 0), (0, extra[0]), (0, extra[1])]
            result = result.padded(forSizes: sizes, with: 0)
            if let bias {
                // The extra positions hold the bias alone, as the full computation would give.
                let mask = MLTensor(repeating: 0, shape: [1, 1, fullSize[0], fullSize[1]]).padded(
                    forSizes: sizes, with: 1)
                result = result + mask * bias.reshapedIfNeeded(to: [1, cOut, 1, 1])
            }
        }
        result = result.sliced(
            starts: [0, 0, before[0], before[1]], steps: [1, 1, 1, 1], counts: [n, cOut, sizes[0], sizes[1]])
        return spatial == 2 ? result : result.squeezingShape(at: 2)
    }

    /// `max_pool` or `avg_pool`.
    static func poolHandler(average: Bool) -> OperationLowering.Handler {
        return { lowering in
            let x = try lowering.tensor("x")
            let geometry = try lowering.windowGeometry()
            guard let kernel = geometry.kernel, kernel.allSatisfy({ $0 >= 1 }) else {
                throw lowering.invalid("kernel_sizes must be given and positive")
            }
            guard kernel.count <= 3 else { throw lowering.unsupported("\(kernel.count)-D pooling") }
            let ceilMode = try lowering.bool("ceil_mode") ?? false
            let excludePadding = try lowering.bool("exclude_padding_from_average") ?? false
            return { args in
                let v = args[x].asFloat
                let spatial = kernel.count
                if spatial == 3 {
                    return [try pool3d(v, kernel: kernel, geometry, average: average, excludePadding: excludePadding)]
                }
                try require(v.rank == spatial + 2, "input \(v.shape) does not fit a \(spatial)-D pool")
                let strides = geometry.strides ?? kernel.map { _ in 1 }
                try require(strides.count == spatial, "strides \(strides) need \(spatial) values")
                let pads = try geometry.padding(
                    input: Array(v.shape.suffix(spatial)), kernel: kernel, strides: strides,
                    dilations: kernel.map { _ in 1 })
                let x4 = spatial == 2 ? v : v.expandingShape(at: 2)
                let k = spatial == 2 ? kernel : [1, kernel[0]]
                let s = spatial == 2 ? strides : [1, strides[0]]
                let p = spatial == 2 ? pads : [(0, 0), pads[0]]
                let y = x4.pooled2D(
                    average ? .average(countIncludePad: !excludePadding) : .maximum, kernel: (k[0], k[1]),
                    strides: (s[0], s[1]), padding: (p[0].0, p[0].1, p[1].0, p[1].1), ceilMode: ceilMode)
                return [spatial == 2 ? y : y.squeezingShape(at: 2)]
            }
        }
    }

}

extension OperationLowering {
    /// Strides, dilations and padding of a conv or pool, as written in the op.
    struct WindowGeometry: Sendable {
        var strides: [Int]?
        var dilations: [Int]?
        var padType: String
        var pad: [Int]?
        var kernel: [Int]?

        /// `(before, after)` padding per spatial axis for `input` spatial sizes and the
        /// (undilated) `kernel` sizes.
        func padding(input: [Int], kernel: [Int], strides: [Int], dilations: [Int]) throws -> [(Int, Int)] {
            switch padType {
            case "valid":
                return input.map { _ in (0, 0) }
            case "custom":
                let pad = self.pad ?? [Int](repeating: 0, count: 2 * input.count)
                try require(pad.count == 2 * input.count, "pad \(pad) needs two values per spatial axis")
                return (0..<input.count).map { (pad[2 * $0], pad[2 * $0 + 1]) }
            default:  // same, same_lower
                return (0..<input.count).map { i in
                    let effective = (kernel[i] - 1) * dilations[i] + 1
                    let outSize = (input[i] + strides[i] - 1) / strides[i]
                    let total = Swift.max(0, (outSize - 1) * strides[i] + effective - input[i])
                    let small = total / 2
                    return padType == "same" ? (small, total - small) : (total - small, small)
                }
            }
        }
    }

    /// Reads `strides`, `dilations`, `pad_type`, `pad` (and `kernel_sizes` for pooling).
    func windowGeometry() throws -> WindowGeometry {
        let padType = try string("pad_type") ?? "valid"
        guard ["valid", "same", "same_lower", "custom"].contains(padType) else {
            throw invalid("unknown pad_type '\(padType)'")
        }
        let (strides, dilations) = (try ints("strides"), try ints("dilations"))
        // `same` padding divides by the strides, so they are checked here, once. (`ints` clamps
        // every value below 2³¹ in magnitude, so the window arithmetic cannot overflow.)
        guard (strides ?? []).allSatisfy({ $0 >= 1 }), (dilations ?? []).allSatisfy({ $0 >= 1 }) else {
            throw invalid("strides and dilations must be positive")
        }
        return WindowGeometry(
            strides: strides, dilations: dilations, padType: padType, pad: try ints("pad"),
            kernel: try ints("kernel_sizes"))
    }

    /// A constant `conv_transpose` weight `[C_in, C_out/groups, k…]` rearranged once into the
    /// convolution weight `[C_out, C_in/groups, kH, kW]` with reversed taps (1-D kernels get
    /// `kH = 1`); `nil` when the weight is not a constant of that form.
    func packedTransposeWeight(groups: Int) -> MILConstant? {
        guard case .name(let name)? = operation.inputs["weight"]?.bindings.first,
            let constant = context.constants[name], let w = constant.floatValues,
            constant.shape.count == 3 || constant.shape.count == 4
        else { return nil }
        let shape = constant.shape
        let (cIn, cOutPerGroup) = (shape[0], shape[1])
        let (kh, kw) = shape.count == 4 ? (shape[2], shape[3]) : (1, shape[2])
        guard cIn % groups == 0, w.count == cIn * cOutPerGroup * kh * kw else { return nil }
        let cInPerGroup = cIn / groups
        let cOut = cOutPerGroup * groups
        var packed = [Float](repeating: 0, count: w.count)
        for o in 0..<cOut {
            let (g, co) = (o / cOutPerGroup, o % cOutPerGroup)
            for ci in 0..<cInPerGroup {
                for a in 0..<kh {
                    for b in 0..<kw {
                        let source =
                            (((g * cInPerGroup + ci) * cOutPerGroup + co) * kh + (kh - 1 - a)) * kw + (kw - 1 - b)
                        packed[((o * cInPerGroup + ci) * kh + a) * kw + b] = w[source]
                    }
                }
            }
        }
        return MILConstant(shape: [cOut, cInPerGroup, kh, kw], dataType: .float32, elements: .floats(packed))
    }
}
