import TesseraKernels
import TesseraTensor

/// The image sampler shared by `resample`, `affine` and `crop_resize`: reads `[B, C, H, W]`
/// images at fractional pixel positions computed in the graph, with bilinear or nearest
/// interpolation and a padding rule for positions outside the image.
///
/// It is graph ops only: each interpolation corner is one gather from the image laid out as
/// `[B·H·W, C]` rows (a copy of the image), at `b·H·W + y·W + x`, weighted and summed.
extension MILOp {
    /// What a position outside the image reads.
    enum SamplePadding: Sendable, Equatable {
        /// The image is surrounded by this value (each interpolation corner outside reads it).
        case constant(Double)
        /// The position is clamped to the image (edge values repeat).
        case border
        /// The position is reflected about the centres of the edge pixels (`|1, 2, 3|` →
        /// `2, 3, 2, 1, 2, 3, 2, 1, 2`), then clamped.
        case reflection
        /// The position is reflected about the outer edges of the edge pixels (`|1, 2, 3|` →
        /// `3, 2, 1, 1, 2, 3, 3, 2, 1`), then clamped.
        case symmetric

        /// The MIL `padding_mode` with its `padding_value`, or `nil` for an unknown mode.
        init?(mode: String, value: Double) {
            switch mode {
            case "constant": self = .constant(value)
            case "border": self = .border
            case "reflection": self = .reflection
            case "symmetric": self = .symmetric
            default: return nil
            }
        }
    }

    /// `x` `[B, C, H, W]` sampled at pixel positions `py`, `px` (Float32, shape `[M, Ho, Wo]`)
    /// of image `batch[m]` (Int32 `[M]`; `nil`: image `m`, with `M = B`), as `[M, C, Ho, Wo]`.
    ///
    /// Position `(0, 0)` is the centre of the top-left pixel. Nearest sampling rounds halves up,
    /// or with `halvesToEven` to the even neighbour (`torch.nn.functional.grid_sample`'s
    /// `nearbyint`, which coremltools' `resample` tests expect: 0.5 reads pixel 0).
    static func sample(
        _ x: MLTensor, batch: MLTensor?, py: MLTensor, px: MLTensor, nearest: Bool, padding: SamplePadding,
        halvesToEven: Bool = false
    ) throws -> MLTensor {
        try require(x.rank == 4, "the image must be [B, C, H, W], got \(x.shape)")
        let image = x.asFloat
        let (b, c, h, w) = (image.shape[0], image.shape[1], image.shape[2], image.shape[3])
        let m = py.shape[0]
        try require(h >= 1 && w >= 1 && c >= 1 && b >= 1, "cannot sample the empty image \(x.shape)")
        try require(batch != nil || m == b, "\(m) sampling grids for \(b) images")
        try require(b * h * w < Int(Int32.max), "the image \(x.shape) is too large to index with int32")
        let rows = image.transposed(permutation: [0, 2, 3, 1]).reshaped(to: [b * h * w, c])
        let imageIndex =
            batch ?? MLTensor(shape: [m], scalars: (0..<m).map { Int32($0) }, scalarType: Int32.self)
        let base = (imageIndex.converted(to: .int32).reshaped(to: [m, 1, 1]) * imageIndex.scalar(Double(h * w)))
        let (y, x) = (try bounded(py.asFloat, size: h, padding), try bounded(px.asFloat, size: w, padding))
        var corners: [(y: MLTensor, x: MLTensor, weight: MLTensor?)] = []
        if nearest {
            let half = y.scalar(0.5)
            corners.append(
                halvesToEven ? (y.round(), x.round(), nil) : ((y + half).floor(), (x + half).floor(), nil))
        } else {
            let (y0, x0) = (y.floor(), x.floor())
            let (y1, x1) = (
                (y0 + y.scalar(1)), (x0 + x.scalar(1))
            )
            let (wy, wx) = ((y - y0), (x - x0))
            let (vy, vx) = (
                (y.scalar(1) - wy), (x.scalar(1) - wx)
            )
            corners = [
                (y0, x0, (vy * vx)), (y0, x1, (vy * wx)),
                (y1, x0, (wy * vx)), (y1, x1, (wy * wx)),
            ]
        }
        var sum: MLTensor?
        for corner in corners {
            let (yc, xc) = (try clamped(corner.y, size: h), try clamped(corner.x, size: w))
            let linear = (base + ((yc.converted(to: .int32) * base.scalar(Double(w))) + xc.converted(to: .int32)))
            var value = rows.gathering(atIndices: linear, alongAxis: 0)  // [M, Ho, Wo, C]
            if case .constant(let outside) = padding {
                let inside = ((yc .== corner.y) .& (xc .== corner.x))
                value = MLTensor.selecting(inside.reshaped(to: inside.shape + [1]), value, value.scalar(outside))
            }
            if let weight = corner.weight {
                value = (value * weight.reshaped(to: weight.shape + [1]))
            }
            sum = sum.map { ($0 + value) } ?? value
        }
        guard let sum else { return image.placeholder }
        return sum.transposed(permutation: [0, 3, 1, 2])
    }

    /// `p` limited to `0...size - 1` as `padding` says (constant padding leaves it as it is).
    static func bounded(_ p: MLTensor, size: Int, _ padding: SamplePadding) throws -> MLTensor {
        switch padding {
        case .constant: return p
        case .border: return try clamped(p, size: size)
        case .reflection: return try clamped(try reflected(p, low: 0, high: Double(size - 1)), size: size)
        case .symmetric: return try clamped(try reflected(p, low: -0.5, high: Double(size) - 0.5), size: size)
        }
    }

    /// `p` clamped to `0...size - 1`.
    static func clamped(_ p: MLTensor, size: Int) throws -> MLTensor {
        pointwiseMin(pointwiseMax(p, p.scalar(0)), p.scalar(Double(size - 1)))
    }

    /// `p` folded into `low...high` by reflecting it at both ends, repeatedly.
    static func reflected(_ p: MLTensor, low: Double, high: Double) throws -> MLTensor {
        let span = high - low
        guard span > 0 else { return (p * p.scalar(0)) }
        let distance = (p - p.scalar(low)).abs()
        let flips = (distance / p.scalar(span)).floor()
        let extra = (distance - (flips * p.scalar(span)))
        let halfFlips = (flips / p.scalar(2)).floor()
        let even = (flips .== (halfFlips * p.scalar(2)))
        return MLTensor.selecting(
            even, (extra + p.scalar(low)), (p.scalar(high) - extra))
    }

    /// A normalized coordinate `c` (`mode` as MIL spells it) as a pixel position along an
    /// axis of `size`.
    static func pixelPosition(_ c: MLTensor, size: Int, mode: String, alignCorners: Bool) throws -> MLTensor {
        if mode == "unnormalized" { return c }
        // [0, 1] → [-1, 1] first.
        let centred =
            mode == "normalized_zero_to_one"
            ? ((c * c.scalar(2)) - c.scalar(1)) : c
        let shifted = (centred + c.scalar(1))
        if alignCorners { return (shifted * c.scalar(Double(size - 1) / 2)) }
        return ((shifted * c.scalar(Double(size) / 2)) - c.scalar(0.5))
    }

    /// The coordinate modes `resample` and `affine` accept.
    static let coordinateModes: Set<String> = ["unnormalized", "normalized_minus_one_to_one", "normalized_zero_to_one"]
}
