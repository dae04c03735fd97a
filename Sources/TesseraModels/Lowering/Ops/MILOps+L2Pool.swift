import TesseraTensor

/// `l2_pool` (1-D and 2-D): the square root of the sum of squares over each window,
/// `sqrt(Σ x²)`, with the other pools' `kernel_sizes`, `strides`, `pad_type`, `pad` and
/// `ceil_mode`.
///
/// The window sums are a depthwise convolution of `x²` with a kernel of ones (padding adds
/// zeros, which leave a sum unchanged, so `ceil_mode`'s partial last window is more padding
/// after the input), on the register-blocked depthwise kernel.
extension MILOp {
    static let l2PoolOps: [MILOp] = [
        MILOp("l2_pool", batch: .leadingAxis, cost: .elementwise) { lowering in
            let x = try lowering.tensor("x")
            let geometry = try lowering.windowGeometry()
            guard let kernel = geometry.kernel, kernel.allSatisfy({ $0 >= 1 }) else {
                throw lowering.invalid("kernel_sizes must be given and positive")
            }
            guard kernel.count <= 2 else { throw lowering.unsupported("\(kernel.count)-D L2 pooling") }
            let ceilMode = try lowering.bool("ceil_mode") ?? false
            return { args in [try l2Pool(args[x].asFloat, kernel: kernel, geometry, ceilMode: ceilMode)] }
        }
    ]

    /// `sqrt(Σ x²)` over each window of a rank-3 (1-D) or rank-4 (2-D) input.
    static func l2Pool(_ x: MLTensor, kernel: [Int], _ geometry: OperationLowering.WindowGeometry, ceilMode: Bool)
        throws -> MLTensor
    {
        let spatial = kernel.count
        try require(x.rank == spatial + 2, "input \(x.shape) does not fit a \(spatial)-D pool")
        let strides = geometry.strides ?? kernel.map { _ in 1 }
        try require(strides.count == spatial && strides.allSatisfy { $0 >= 1 }, "bad strides \(strides)")
        let sizes = Array(x.shape.suffix(spatial))
        var pads = try geometry.padding(
            input: sizes, kernel: kernel, strides: strides, dilations: kernel.map { _ in 1 })
        for i in 0..<spatial {
            let (before, after) = pads[i]
            try require(
                before >= 0 && after >= 0 && sizes[i] + before + after >= kernel[i],
                "the window \(kernel) does not fit in the padded input \(x.shape)")
            guard ceilMode else { continue }
            // PyTorch's ceil rule: one more window when a partial one starts inside the input.
            let span = sizes[i] + before + after - kernel[i]
            var count = (span + strides[i] - 1) / strides[i] + 1
            if (count - 1) * strides[i] >= sizes[i] + before { count -= 1 }
            pads[i].1 += Swift.max(0, (count - 1) * strides[i] + kernel[i] - (sizes[i] + before + after))
        }
        let channels = x.shape[1]
        let ones = MLTensor(repeating: 1, shape: [channels, 1] + kernel)
        let sums = try conv(
            (x * x), weight: ones, bias: nil,
            OperationLowering.WindowGeometry(
                strides: strides, dilations: nil, padType: "custom", pad: pads.flatMap { [$0.0, $0.1] }, kernel: nil),
            groups: channels)
        return sums.squareRoot()
    }
}
