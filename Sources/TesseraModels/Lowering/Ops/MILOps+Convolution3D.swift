import TesseraKernels
import TesseraTensor

/// 3-D `conv`, `max_pool` and `avg_pool` (`[N, C, D, H, W]`), composed from the 2-D kernels;
/// the `conv`, `max_pool` and `avg_pool` registrations (`MILOps+Convolution.swift`) send
/// rank-5 inputs here.
///
/// A 3-D convolution is one 2-D convolution: for every output depth the `kD` input planes it
/// reads (after padding D) are stacked on the channel axis, each group's channels ordered
/// `[kD, C/groups]`, and the weight `[O, C/groups, kD, kH, kW]` is laid out the same way. The
/// multiply-adds are exactly the direct 3-D convolution's, on the tuned im2col/GEMM (or
/// depthwise) kernel with its fused bias; the price is the input copied `kD` times, as an
/// im2col along depth would. A new 3-D kernel would duplicate the 2-D one's blocking.
///
/// Pooling is separable: a 2-D pool over H and W of the `[N, C·D, H, W]` view (no copy),
/// then the window along D as `kD` strided slices combined element-wise (max, or a sum
/// divided by the window's size or, excluding padding, by its count of real planes).
extension MILOp {
    /// A 3-D convolution of `x` `[N, C, D, H, W]` by `weight` `[O, C/groups, kD, kH, kW]`.
    static func conv3d(
        _ x: MLTensor, weight: MLTensor, bias: MLTensor?, _ geometry: OperationLowering.WindowGeometry, groups: Int
    ) throws -> MLTensor {
        try require(weight.rank == 5, "weight \(weight.shape) and input \(x.shape) ranks differ")
        let strides = geometry.strides ?? [1, 1, 1]
        let dilations = geometry.dilations ?? [1, 1, 1]
        try require(strides.count == 3 && dilations.count == 3, "strides/dilations need 3 values")
        try require(
            strides.allSatisfy { $0 >= 1 } && dilations.allSatisfy { $0 >= 1 }, "strides and dilations must be positive"
        )
        let (n, c, depth) = (x.shape[0], x.shape[1], x.shape[2])
        let (o, perGroup, kd) = (weight.shape[0], weight.shape[1], weight.shape[2])
        try require(
            c >= 1 && weight.shape.dropFirst(2).allSatisfy { $0 >= 1 },
            "empty channels or kernel: \(x.shape), \(weight.shape)")
        try require(
            c % groups == 0 && o % groups == 0, "groups \(groups) must divide \(c) input and \(o) output channels")
        try require(perGroup == c / groups, "weight \(weight.shape) needs \(c / groups) input channels per group")
        let pads = try geometry.padding(
            input: Array(x.shape.suffix(3)), kernel: Array(weight.shape.suffix(3)), strides: strides,
            dilations: dilations)
        try require(pads.allSatisfy { $0.0 >= 0 && $0.1 >= 0 }, "padding must be non-negative")
        let padded = depth + pads[0].0 + pads[0].1
        let reach = (kd - 1) * dilations[0] + 1
        try require(padded >= reach, "the kernel \(weight.shape) does not fit in the padded input \(x.shape)")
        let outDepth = (padded - reach) / strides[0] + 1
        let (h, w) = (x.shape[3], x.shape[4])
        let source =
            pads[0] == (0, 0)
            ? x
            : x.padded(forSizes: [(0, 0), (0, 0), pads[0], (0, 0), (0, 0)], with: 0)
        // Tap t reads planes t·dilation + d·stride: [N, g, 1, C/g, D_out, H, W] each.
        var taps: [MLTensor] = []
        for t in 0..<kd {
            let planes = source.sliced(
                starts: [0, 0, t * dilations[0], 0, 0], steps: [1, 1, strides[0], 1, 1],
                counts: [n, c, outDepth, h, w])
            taps.append(planes.reshaped(to: [n, groups, 1, perGroup, outDepth, h, w]))
        }
        let stacked = MLTensor(concatenating: taps, alongAxis: 2).transposed(permutation: [0, 4, 1, 2, 3, 5, 6])
            .reshaped(to: [n * outDepth, c * kd, h, w])
        let planar = weight.transposed(permutation: [0, 2, 1, 3, 4])
            .reshaped(to: [o, kd * perGroup, weight.shape[3], weight.shape[4]])
        let y = try conv(
            stacked, weight: planar, bias: bias,
            OperationLowering.WindowGeometry(
                strides: Array(strides.suffix(2)), dilations: Array(dilations.suffix(2)), padType: "custom",
                pad: [pads[1].0, pads[1].1, pads[2].0, pads[2].1], kernel: nil),
            groups: groups)
        return y.reshaped(to: [n, outDepth, o, y.shape[2], y.shape[3]]).transposed(permutation: [0, 2, 1, 3, 4])
    }

    /// A 3-D max or average pool of `x` `[N, C, D, H, W]` (no `ceil_mode`: MIL allows it for
    /// 1-D and 2-D pools only).
    static func pool3d(
        _ x: MLTensor, kernel: [Int], _ geometry: OperationLowering.WindowGeometry, average: Bool, excludePadding: Bool
    ) throws -> MLTensor {
        try require(x.rank == 5, "input \(x.shape) does not fit a 3-D pool")
        let strides = geometry.strides ?? [1, 1, 1]
        try require(strides.count == 3 && strides.allSatisfy { $0 >= 1 }, "bad strides \(strides)")
        let sizes = Array(x.shape.suffix(3))
        let pads = try geometry.padding(input: sizes, kernel: kernel, strides: strides, dilations: [1, 1, 1])
        for (size, (k, (before, after))) in zip(sizes, zip(kernel, pads)) {
            try require(
                before >= 0 && after >= 0 && size + before + after >= k,
                "the window \(kernel) does not fit in the padded input \(x.shape)")
        }
        let (n, c, depth) = (x.shape[0], x.shape[1], x.shape[2])
        let planes = x.reshaped(to: [n, c * depth, sizes[1], sizes[2]])
        let pooled = planes.pooled2D(
            average ? .average(countIncludePad: !excludePadding) : .maximum, kernel: (kernel[1], kernel[2]),
            strides: (strides[1], strides[2]), padding: (pads[1].0, pads[1].1, pads[2].0, pads[2].1))
        let (ho, wo) = (pooled.shape[2], pooled.shape[3])
        // The window along D: a 2-D pool of the [N, C, D, H·W] volume with a D × 1 window. Its
        // kernel clips every window to the real planes (the averages divide by the window's size
        // or by the planes it covers; a product of the H, W and D counts, as the 3-D window's),
        // so neither the padding nor the window's size is ever made.
        let (kd, sd) = (kernel[0], strides[0])
        let depthPooled = pooled.reshaped(to: [n, c, depth, ho * wo]).pooled2D(
            average ? .average(countIncludePad: !excludePadding) : .maximum, kernel: (kd, 1), strides: (sd, 1),
            padding: (pads[0].0, pads[0].1, 0, 0))
        return depthPooled.reshaped(to: [n, c, depthPooled.shape[2], ho, wo])
    }
}
