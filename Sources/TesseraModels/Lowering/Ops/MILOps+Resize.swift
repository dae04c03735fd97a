import TesseraTensor

/// Target-size resizes on the ``ResizeSampling`` grids:
///
/// - `resize_bilinear` (iOS 15): the last two axes of `x` (rank ≥ 3) to
///   `target_size_height × target_size_width` (default 1 × 1), bilinear on the
///   `sampling_mode` grid (default `DEFAULT`);
/// - `resize` (iOS 17): the last `resized_dims` axes of `x` to the last `resized_dims`
///   values of `shape` (read at run time; a `0` keeps the axis's size), `LINEAR` (per axis,
///   so bilinear for two axes) or `NEAREST_NEIGHBOR`.
extension MILOp {
    static let resizeOps: [MILOp] = [
        MILOp("resize_bilinear", batch: .leadingAxis, cost: .elementwise) { lowering in
            let x = try lowering.tensor("x")
            let height = try lowering.int("target_size_height") ?? 1
            let width = try lowering.int("target_size_width") ?? 1
            guard height >= 1 && width >= 1 else {
                throw lowering.invalid("target size \(height)×\(width) must be positive")
            }
            let sampling = try lowering.resizeSampling()
            return { args in
                let v = args[x]
                try require(v.rank >= 3, "x must have rank ≥ 3, got \(v.shape)")
                let rows = try sampling.resampled(v, axis: v.rank - 2, count: height, nearest: false)
                return [try sampling.resampled(rows, axis: v.rank - 1, count: width, nearest: false)]
            }
        },
        // `resized_dims` may cover every axis, the batch's too: batches run as a loop.
        MILOp("resize", batch: .notSeparable, cost: .elementwise) { lowering in
            let x = try lowering.tensor("x")
            let shape = try lowering.required(lowering.runtimeInts("shape"), "shape")
            let dims = try lowering.required(lowering.int("resized_dims"), "resized_dims")
            let mode = try lowering.string("interpolation_mode") ?? "LINEAR"
            guard mode == "LINEAR" || mode == "NEAREST_NEIGHBOR" else {
                throw lowering.invalid("unknown interpolation_mode '\(mode)'")
            }
            let sampling = try lowering.resizeSampling()
            return { args in
                let v = args[x]
                let target = try shape.values(args)
                try require(
                    dims >= 0 && dims <= target.count && target.count <= v.rank,
                    "resized_dims \(dims) and shape \(target) do not fit x \(v.shape)")
                var result = v
                for k in 0..<dims {
                    let axis = v.rank - dims + k
                    let size = target[target.count - dims + k]
                    try require(size >= 0, "shape \(target) holds a negative size")
                    result = try sampling.resampled(
                        result, axis: axis, count: size == 0 ? v.shape[axis] : size, nearest: mode == "NEAREST_NEIGHBOR"
                    )
                }
                return [result]
            }
        },
    ]
}

extension OperationLowering {
    /// The op's `sampling_mode` (default `DEFAULT`).
    ///
    /// - Throws: ``ModelFormatError`` for a name ``ResizeSampling`` does not know.
    func resizeSampling() throws -> ResizeSampling {
        let name = try string("sampling_mode") ?? "DEFAULT"
        guard let sampling = ResizeSampling(rawValue: name) else { throw invalid("unknown sampling_mode '\(name)'") }
        return sampling
    }
}
