import TesseraTensor

/// 3-D `conv_transpose` (`x` `[N, C_in, D, H, W]`, `weight` `[C_in, C_out/groups, kD, kH, kW]`);
/// the `conv_transpose` registration (`MILOps+Convolution.swift`) sends rank-5 inputs here.
///
/// A transposed convolution is a convolution of the input spread out by the strides (`s - 1`
/// zeros between elements along each axis), padded by `(k - 1) · dilation` on both sides,
/// with the weight's taps reversed and its channel axes swapped per group; the full result
/// is then cropped by the padding (`custom`, `same`, `same_lower`) or to `output_shape`
/// (positions past the full result, an output padding, hold the bias alone). The
/// convolution is ``MILOp/conv3d(_:weight:bias:_:groups:)``, so the multiply-adds run on the
/// tuned 2-D kernels. Spreading the input costs up to `s_D·s_H·s_W` times its size, and
/// the kernel multiplies those zeros too, as the 1-D and 2-D transposed convolutions do.
extension MILOp {
    /// A 3-D transposed convolution of `x` `[N, C_in, D, H, W]` by `weight`
    /// `[C_in, C_out/groups, kD, kH, kW]`, `[N, C_out, D', H', W']`.
    static func convTranspose3d(
        _ x: MLTensor, weight: MLTensor, bias: MLTensor?, _ geometry: OperationLowering.WindowGeometry, groups: Int,
        outputShape: [Int]?
    ) throws -> MLTensor {
        try require(weight.rank == 5, "weight \(weight.shape) and input \(x.shape) ranks differ")
        let strides = geometry.strides ?? [1, 1, 1]
        let dilations = geometry.dilations ?? [1, 1, 1]
        try require(strides.count == 3 && dilations.count == 3, "strides/dilations need 3 values")
        try require(
            strides.allSatisfy { $0 >= 1 } && dilations.allSatisfy { $0 >= 1 }, "strides and dilations must be positive"
        )
        let (n, cIn) = (x.shape[0], x.shape[1])
        let sizes = Array(x.shape.suffix(3))
        let kernel = Array(weight.shape.suffix(3))
        try require(
            cIn % groups == 0 && weight.shape[0] == cIn,
            "weight \(weight.shape) does not fit \(cIn) input channels in \(groups) groups")
        let cOut = weight.shape[1] * groups
        try require(
            (sizes + kernel).allSatisfy { $0 > 0 } && cIn > 0, "empty input \(x.shape) or kernel \(weight.shape)")
        // Zeros between input elements: [N, C, D, 1, H, 1, W, 1] padded to s - 1 after each.
        var spread = x
        if strides != [1, 1, 1] {
            spread = x.reshapedIfNeeded(to: [n, cIn, sizes[0], 1, sizes[1], 1, sizes[2], 1])
                .padded(
                    forSizes: [
                        (0, 0), (0, 0), (0, 0), (0, strides[0] - 1), (0, 0), (0, strides[1] - 1), (0, 0),
                        (0, strides[2] - 1),
                    ], with: 0
                )
                .reshapedIfNeeded(to: [n, cIn, sizes[0] * strides[0], sizes[1] * strides[1], sizes[2] * strides[2]])
                .sliced(
                    starts: [0, 0, 0, 0, 0], steps: [1, 1, 1, 1, 1],
                    counts: [n, cIn] + (0..<3).map { (sizes[$0] - 1) * strides[$0] + 1 })
        }
        let reach = (0..<3).map { (kernel[$0] - 1) * dilations[$0] }
        let padded = spread.padded(
            forSizes: [(0, 0), (0, 0), (reach[0], reach[0]), (reach[1], reach[1]), (reach[2], reach[2])], with: 0)
        // [C_in, C_out/g, k…] → [g, C_out/g, C_in/g, k…] → [C_out, C_in/g, k…], taps reversed.
        let flipped = weight.reshapedIfNeeded(to: [groups, cIn / groups, cOut / groups] + kernel)
            .transposed(permutation: [0, 2, 1, 3, 4, 5])
            .reshapedIfNeeded(to: [cOut, cIn / groups] + kernel)
            .sliced(
                starts: [0, 0, kernel[0] - 1, kernel[1] - 1, kernel[2] - 1], steps: [1, 1, -1, -1, -1],
                counts: [cOut, cIn / groups] + kernel)
        let full = try conv3d(
            padded, weight: flipped, bias: bias.map { $0.reshapedIfNeeded(to: [$0.scalarCount]) },
            OperationLowering.WindowGeometry(
                strides: [1, 1, 1], dilations: dilations, padType: "valid", pad: nil, kernel: nil),
            groups: groups)
        guard full.rank == 5 else { return full }  // the convolution's rule failed; the scope reports it
        let fullSize = Array(full.shape.suffix(3))
        var before = [0, 0, 0]
        var counts = fullSize
        switch geometry.padType {
        case "custom":
            let pad = geometry.pad ?? [Int](repeating: 0, count: 6)
            try require(pad.count == 6, "pad \(pad) needs two values per spatial axis")
            before = [pad[0], pad[2], pad[4]]
            counts = (0..<3).map { fullSize[$0] - pad[2 * $0] - pad[2 * $0 + 1] }
        case "same", "same_lower":
            for i in 0..<3 {
                let target = sizes[i] * strides[i]
                let total = Swift.max(0, fullSize[i] - target)
                before[i] = geometry.padType == "same" ? total / 2 : total - total / 2
                counts[i] = target
            }
        default: break
        }
        if let outputShape {
            try require(outputShape.count == 5, "output_shape \(outputShape) needs 5 values")
            counts = Array(outputShape.suffix(3))
        }
        try require(counts.allSatisfy { $0 >= 0 } && before.allSatisfy { $0 >= 0 }, "padding larger than the output")
        // Sizes past the full result (output padding) are zeros, plus the bias.
        let extra = (0..<3).map { Swift.max(0, before[$0] + counts[$0] - fullSize[$0]) }
        var result = full
        if extra != [0, 0, 0] {
            let pads: [(before: Int, after: Int)] = [(0, 0), (0, 0), (0, extra[0]), (0, extra[1]), (0, extra[2])]
            result = result.padded(forSizes: pads, with: 0)
            if let bias {
                let mask = MLTensor(repeating: 0, shape: [1, 1] + fullSize).padded(forSizes: pads, with: 1)
                result = result + mask * bias.reshapedIfNeeded(to: [1, cOut, 1, 1, 1])
            }
        }
        return result.sliced(starts: [0, 0] + before, steps: [1, 1, 1, 1, 1], counts: [n, cOut] + counts)
    }
}
