import TesseraTensor

/// `resample` (iOS 15+): `x` `[B, C, H, W]` sampled at `coordinates` `[B, Ho, Wo, 2]`, each an
/// `(x, y)` pair, with `sampling_mode` `bilinear` or `nearest`, `padding_mode` `constant`,
/// `border`, `reflection` or `symmetric`, and `coordinates_mode` `unnormalized`,
/// `normalized_minus_one_to_one` or `normalized_zero_to_one` (`align_corners` places ±1 on
/// the edge pixels' centres, else on their outer edges).
///
/// Positions outside the image follow `torch.nn.functional.grid_sample`, which coremltools
/// converts to this op: `border` clamps the position, `reflection` and `symmetric` reflect it
/// (about the edge pixels' centres or their outer edges), and `constant` reads
/// `padding_value` for each interpolation corner outside; `nearest` rounds a position halfway
/// between two pixels to the even one, as `grid_sample` does.
extension MILOp {
    static let resampleOps: [MILOp] = [
        // Images and coordinates share the batch axis: batches run as a loop.
        MILOp("resample", batch: .notSeparable, cost: .elementwise) { lowering in
            let x = try lowering.tensor("x")
            let coordinates = try lowering.tensor("coordinates")
            let sampling = try lowering.string("sampling_mode") ?? "bilinear"
            guard sampling == "bilinear" || sampling == "nearest" else {
                throw lowering.invalid("unknown sampling_mode '\(sampling)'")
            }
            let paddingMode = try lowering.string("padding_mode") ?? "constant"
            guard let padding = SamplePadding(mode: paddingMode, value: try lowering.double("padding_value") ?? 0)
            else {
                throw lowering.invalid("unknown padding_mode '\(paddingMode)'")
            }
            let mode = try lowering.string("coordinates_mode") ?? "unnormalized"
            guard coordinateModes.contains(mode) else { throw lowering.invalid("unknown coordinates_mode '\(mode)'") }
            let align = try lowering.bool("align_corners") ?? false
            return { args in
                let (image, grid) = (args[x], args[coordinates].asFloat)
                try require(image.rank == 4, "x must be [B, C, H, W], got \(image.shape)")
                try require(
                    grid.rank == 4 && grid.shape[0] == image.shape[0] && grid.shape[3] == 2,
                    "coordinates \(grid.shape) must be [B, Ho, Wo, 2] for x \(image.shape)")
                let plane = Array(grid.shape.prefix(3))
                let cx = grid.narrowed(alongAxis: 3, start: 0, count: 1).reshaped(to: plane)
                let cy = grid.narrowed(alongAxis: 3, start: 1, count: 1).reshaped(to: plane)
                return [
                    try sample(
                        image, batch: nil,
                        py: try pixelPosition(cy, size: image.shape[2], mode: mode, alignCorners: align),
                        px: try pixelPosition(cx, size: image.shape[3], mode: mode, alignCorners: align),
                        nearest: sampling == "nearest", padding: padding, halvesToEven: true)
                ]
            }
        }
    ]
}
