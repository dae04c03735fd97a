import TesseraTensor

/// `crop_resize`: boxes cut from `x` `[B, C, H, W]` and resized bilinearly to
/// `target_height × target_width`, in all three forms:
///
/// - iOS 15/16 `roi` `[N, 1, 4, 1, 1]`: every box from every image, `[N, B, C, th, tw]`;
/// - iOS 15/16 `roi` `[N, 1, 5, 1, 1]`: an image index, then the box, `[N, 1, C, th, tw]` as
///   the op's documentation says (coremltools' type inference declares `[N, B, C, th, tw]`,
///   so a model with more than one image fails its declared-shape check);
/// - iOS 17 `boxes` `[N, 4]` and `box_indices` `[N]` (default `0..<N`), `[N, C, th, tw]`.
///
/// Boxes are read per `box_coordinate_mode` (corners, or a centre and a size, height or width
/// first), scaled by `(H - 1, W - 1)` when `normalized_coordinates`, then by `spatial_scale`.
/// The grid is `sampling_mode` `ALIGN_CORNERS`'s (TensorFlow's `crop_and_resize`, which
/// coremltools converts to it): evenly spaced from the box's start to its end, one point at its
/// centre (`STRICT_ALIGN_CORNERS`: at its start). A point outside the image (`y` outside
/// `0...H-1` or `x` outside `0...W-1`) reads `pad_value`, as `crop_and_resize`'s extrapolation
/// value does; a point inside interpolates its in-image neighbours.
/// The other sampling modes have no documented meaning for a box and fail the load. Image
/// indices outside `0..<B` are clamped.
extension MILOp {
    static let cropResizeOps: [MILOp] = [
        // Boxes pick images across the batch: batches run as a loop.
        MILOp("crop_resize", batch: .notSeparable, cost: .elementwise) { lowering in
            let x = try lowering.tensor("x")
            let roi = try lowering.optionalTensor("roi")
            let boxes = try roi == nil ? lowering.tensor("boxes") : nil
            let boxIndices = try roi == nil ? lowering.optionalTensor("box_indices") : nil
            let height = try lowering.int("target_height") ?? 1
            let width = try lowering.int("target_width") ?? 1
            guard height >= 1 && width >= 1 else {
                throw lowering.invalid("target size \(height)×\(width) must be positive")
            }
            let normalized = try lowering.bool("normalized_coordinates") ?? false
            let scale = try lowering.double("spatial_scale") ?? 1
            let coordinates = try lowering.string("box_coordinate_mode") ?? "CORNERS_HEIGHT_FIRST"
            guard boxCoordinateModes.contains(coordinates) else {
                throw lowering.invalid("unknown box_coordinate_mode '\(coordinates)'")
            }
            let sampling = try lowering.string("sampling_mode") ?? "DEFAULT"
            guard sampling == "ALIGN_CORNERS" || sampling == "STRICT_ALIGN_CORNERS" else {
                throw lowering.unsupported("crop_resize with sampling_mode '\(sampling)'")
            }
            let outside = try lowering.double("pad_value") ?? 0
            let crop = CropGeometry(
                height: height, width: width, normalized: normalized, scale: scale, coordinates: coordinates,
                strict: sampling == "STRICT_ALIGN_CORNERS", outside: outside)
            return { args in
                let image = args[x]
                try require(image.rank == 4, "x must be [B, C, H, W], got \(image.shape)")
                if let roi { return [try crop.crops(image, roi: args[roi])] }
                let list = args[boxes!].asFloat
                try require(list.rank == 2 && list.shape[1] == 4, "boxes \(list.shape) must be [N, 4]")
                let n = list.shape[0]
                let images =
                    boxIndices.map { args[$0] }
                    ?? MLTensor(shape: [n], scalars: (0..<n).map { Int32($0) }, scalarType: Int32.self)
                try require(
                    images.scalarCount == n, "box_indices \(images.shape) must hold one index per box of \(list.shape)")
                return [try crop.crops(image, boxes: list, images: images.reshaped(to: [n]))]
            }
        }
    ]

    /// The box conventions of `box_coordinate_mode`.
    static let boxCoordinateModes: Set<String> = [
        "CORNERS_HEIGHT_FIRST", "CORNERS_WIDTH_FIRST", "CENTER_SIZE_HEIGHT_FIRST", "CENTER_SIZE_WIDTH_FIRST",
    ]

    /// A `crop_resize`'s constant parameters.
    struct CropGeometry: Sendable {
        var height: Int
        var width: Int
        var normalized: Bool
        var scale: Double
        var coordinates: String
        var strict: Bool
        var outside: Double

        /// The crops of `image` `[B, C, H, W]` by an iOS 15/16 `roi`: `[N, 1, 4, 1, 1]` (every
        /// box from every image, `[N, B, C, height, width]`) or `[N, 1, 5, 1, 1]` (an image
        /// index, then the box; `[N, 1, C, height, width]`).
        ///
        /// - Throws: ``OperandError`` for another `roi` shape.
        func crops(_ image: MLTensor, roi: MLTensor) throws -> MLTensor {
            let (b, c) = (image.shape[0], image.shape[1])
            let r = roi.asFloat
            try require(
                r.rank == 5 && r.shape[1] == 1 && r.shape[3] == 1 && r.shape[4] == 1
                    && (r.shape[2] == 4 || r.shape[2] == 5),
                "roi \(r.shape) must be [N, 1, 4, 1, 1] or [N, 1, 5, 1, 1]")
            let n = r.shape[0]
            let rows = r.reshaped(to: [n, r.shape[2]])
            if r.shape[2] == 5 {
                let index = rows.narrowed(alongAxis: 1, start: 0, count: 1).reshaped(to: [n])
                let crops = try self.crops(
                    image, boxes: rows.narrowed(alongAxis: 1, start: 1, count: 4), images: index.floor())
                return crops.reshaped(to: [n, 1, c, height, width])
            }
            // Box k/B on image k%B for crop k.
            let every = MLTensor(
                .gather(axis: 0),
                [
                    rows,
                    MLTensor(shape: [n * b], scalars: (0..<n * b).map { Int32($0 / b) }, scalarType: Int32.self),
                ])
            let images = MLTensor(shape: [n * b], scalars: (0..<n * b).map { Int32($0 % b) }, scalarType: Int32.self)
            return try self.crops(image, boxes: every, images: images).reshaped(to: [n, b, c, height, width])
        }

        /// The crops of `image` by `boxes` `[M, 4]` from images `images` `[M]`, as
        /// `[M, C, height, width]`.
        func crops(_ image: MLTensor, boxes: MLTensor, images: MLTensor) throws -> MLTensor {
            let (b, h, w) = (image.shape[0], image.shape[2], image.shape[3])
            let m = boxes.shape[0]
            func column(_ k: Int) throws -> MLTensor {
                boxes.narrowed(alongAxis: 1, start: k, count: 1).reshaped(to: [m, 1, 1])
            }
            let (p, q, r, s) = (try column(0), try column(1), try column(2), try column(3))
            // Corners (y0, x0, y1, x1) in the box's units.
            var (y0, x0, y1, x1): (MLTensor, MLTensor, MLTensor, MLTensor)
            switch coordinates {
            case "CORNERS_HEIGHT_FIRST": (y0, x0, y1, x1) = (p, q, r, s)
            case "CORNERS_WIDTH_FIRST": (y0, x0, y1, x1) = (q, p, s, r)
            default:
                let (cy, cx, sy, sx) = coordinates == "CENTER_SIZE_HEIGHT_FIRST" ? (p, q, r, s) : (q, p, s, r)
                let (hy, hx) = (
                    (sy * sy.scalar(0.5)),
                    (sx * sx.scalar(0.5))
                )
                (y0, x0, y1, x1) = (
                    (cy - hy), (cx - hx), (cy + hy),
                    (cx + hx)
                )
            }
            let (sy, sx) = (scale * (normalized ? Double(h - 1) : 1), scale * (normalized ? Double(w - 1) : 1))
            func grid(_ start: MLTensor, _ end: MLTensor, factor: Double, count: Int, shape: [Int]) throws -> MLTensor {
                let (a, z) = (
                    (start * start.scalar(factor)),
                    (end * end.scalar(factor))
                )
                let steps: [Float] =
                    count == 1 ? [strict ? 0 : 0.5] : (0..<count).map { Float($0) / Float(count - 1) }
                let fractions = MLTensor(shape: shape, scalars: steps, scalarType: Float.self)
                let points = (a + (fractions * (z - a)))
                return points.broadcast(to: [m, height, width])
            }
            let py = try grid(y0, y1, factor: sy, count: height, shape: [1, height, 1])
            let px = try grid(x0, x1, factor: sx, count: width, shape: [1, 1, width])
            let index = try clamped(images.asFloat, size: b).converted(to: .int32)
            let sampled = try sample(image, batch: index, py: py, px: px, nearest: false, padding: .border)
            let inside =
                (py .>= py.scalar(0)) .& (py .<= py.scalar(Double(h - 1))) .& (px .>= px.scalar(0))
                .& (px .<= px.scalar(Double(w - 1)))
            // [M, th, tw] against the samples' [M, C, th, tw].
            return MLTensor.selecting(inside.expandingShape(at: 1), sampled, sampled.scalar(outside))
        }
    }
}
