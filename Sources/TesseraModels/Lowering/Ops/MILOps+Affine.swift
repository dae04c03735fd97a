import TesseraTensor

/// `affine` (iOS 15+): `x` `[B, C, H, W]` resampled through a 2-D affine map, as
/// `torch.nn.functional.affine_grid` followed by `grid_sample` (which coremltools converts to
/// this op): output pixel `(w, h)` at normalized `(u, v)` in `[-1, 1]` reads the input at
/// `(a0·u + a1·v + a2, b0·u + b1·v + b2)`, bilinearly, with `padding_value` outside.
///
/// `transform_matrix` is `[B, 6]` (one map per image) or `[1, 6]`. MIL allows only
/// `bilinear` sampling, `constant` padding, `normalized_minus_one_to_one` coordinates and
/// `align_corners` true; other values fail the load.
extension MILOp {
    static let affineOps: [MILOp] = [
        // Images and maps share the batch axis: batches run as a loop.
        MILOp("affine", batch: .notSeparable, cost: .elementwise) { lowering in
            let x = try lowering.tensor("x")
            let transform = try lowering.tensor("transform_matrix")
            let height = try lowering.required(lowering.int("output_height"), "output_height")
            let width = try lowering.required(lowering.int("output_width"), "output_width")
            guard height >= 1 && width >= 1 else {
                throw lowering.invalid("output size \(height)×\(width) must be positive")
            }
            for (name, allowed) in [
                ("sampling_mode", "bilinear"), ("padding_mode", "constant"),
                ("coordinates_mode", "normalized_minus_one_to_one"),
            ] {
                let value = try lowering.string(name) ?? allowed
                guard value == allowed else { throw lowering.unsupported("affine with \(name) '\(value)'") }
            }
            guard try lowering.bool("align_corners") ?? true else {
                throw lowering.unsupported("affine with align_corners false")
            }
            let outside = try lowering.double("padding_value") ?? 0
            return { args in
                let (image, maps) = (args[x], args[transform].asFloat)
                try require(image.rank == 4, "x must be [B, C, H, W], got \(image.shape)")
                let b = image.shape[0]
                try require(
                    maps.rank == 2 && maps.shape[1] == 6 && (maps.shape[0] == b || maps.shape[0] == 1),
                    "transform_matrix \(maps.shape) must be [\(b), 6] or [1, 6] for x \(image.shape)")
                // The output grid in [-1, 1], ±1 on the corner pixels' centres.
                func line(_ count: Int) -> [Float] {
                    count == 1 ? [-1] : (0..<count).map { -1 + 2 * Float($0) / Float(count - 1) }
                }
                let u = MLTensor(shape: [1, 1, width], scalars: line(width), scalarType: Float.self)
                let v = MLTensor(shape: [1, height, 1], scalars: line(height), scalarType: Float.self)
                let d = maps.shape[0]
                func coefficient(_ k: Int) -> MLTensor {
                    maps.narrowed(alongAxis: 1, start: k, count: 1).reshaped(to: [d, 1, 1])
                }
                func mapped(_ first: Int) -> MLTensor {
                    let terms = ((coefficient(first) * u) + (coefficient(first + 1) * v))
                    let sum = (terms + coefficient(first + 2))
                    return sum.broadcast(to: [b, height, width])
                }
                return [
                    try sample(
                        image, batch: nil,
                        py: try pixelPosition(
                            mapped(3), size: image.shape[2], mode: "normalized_minus_one_to_one", alignCorners: true
                        ),
                        px: try pixelPosition(
                            mapped(0), size: image.shape[3], mode: "normalized_minus_one_to_one", alignCorners: true
                        ),
                        nearest: false, padding: .constant(outside))
                ]
            }
        }
    ]
}
