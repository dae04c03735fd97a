import TesseraTensor

/// Where along one axis a target-size resize samples its input: the `sampling_mode` of the
/// MIL ops `resize_bilinear` and `resize` (iOS 17), and the `SamplingMode` of the
/// NeuralNetwork `resizeBilinear` layer (``init(neuralNetworkMethod:)``).
///
/// For an axis of `Xin` elements resized to `Xout`, sample `i` sits at (coremltools'
/// `resize_bilinear` documentation, every point clamped to `0...Xin-1`):
///
/// | mode | point `i` |
/// |---|---|
/// | `STRICT_ALIGN_CORNERS` | `i · (Xin - 1) / (Xout - 1)` (`0` when `Xout == 1`) |
/// | `ALIGN_CORNERS` | the same, but `(Xin - 1) / 2` when `Xout == 1` |
/// | `DEFAULT` | `i · (Xin - Xin / Xout) / (Xout - 1)` (`0` when `Xout == 1`) |
/// | `OFFSET_CORNERS` | `(i + 0.5) · max(1, Xin - 1) / Xout` |
/// | `UNALIGN_CORNERS` | `(i + 0.5) · Xin / Xout - 0.5` |
///
/// ```swift
/// ResizeSampling.default.grid(input: 2, output: 5)  // [0, 0.4, 0.8, 1, 1]
/// ```
enum ResizeSampling: String, Sendable, CaseIterable {
    case strictAlignCorners = "STRICT_ALIGN_CORNERS"
    case alignCorners = "ALIGN_CORNERS"
    case `default` = "DEFAULT"
    case offsetCorners = "OFFSET_CORNERS"
    case unalignCorners = "UNALIGN_CORNERS"

    /// The mode of a NeuralNetwork `SamplingMode.samplingMethod`: `STRICT_ALIGN_ENDPOINTS_MODE`
    /// (0), `ALIGN_ENDPOINTS_MODE` (1), `UPSAMPLE_MODE` (2), `ROI_ALIGN_MODE` (3), the modes
    /// coremltools converts the MIL names to; `nil` for another value.
    init?(neuralNetworkMethod method: Int) {
        switch method {
        case 0: self = .strictAlignCorners
        case 1: self = .alignCorners
        case 2: self = .default
        case 3: self = .offsetCorners
        default: return nil
        }
    }

    /// The `output` sample points along an axis of `input` elements, clamped to the axis.
    ///
    /// - Precondition: `input >= 1` and `output >= 0`.
    func grid(input: Int, output: Int) -> [Double] {
        let (xin, xout) = (Double(input), Double(output))
        return (0..<output).map { index in
            let i = Double(index)
            let point: Double
            switch self {
            case .strictAlignCorners: point = output > 1 ? i * (xin - 1) / (xout - 1) : 0
            case .alignCorners: point = output > 1 ? i * (xin - 1) / (xout - 1) : (xin - 1) / 2
            case .default: point = output > 1 ? i * (xin - xin / xout) / (xout - 1) : 0
            case .offsetCorners: point = (i + 0.5) * Swift.max(1, xin - 1) / xout
            case .unalignCorners: point = (i + 0.5) * xin / xout - 0.5
            }
            return Swift.min(Swift.max(point, 0), xin - 1)
        }
    }

    /// The source element of each of `output` nearest-neighbour samples along an axis of
    /// `input` elements: the grid point rounded half up, except that `DEFAULT` rounds the
    /// half-pixel grid (`floor((i + 0.5) · Xin / Xout)`), TensorFlow's
    /// `resize_nearest_neighbor(half_pixel_centers=True)` that coremltools converts to it and
    /// its iOS 17 `resize` test pins down (`[a, b]` to 3 is `[a, b, b]`).
    func nearestSources(input: Int, output: Int) -> [Double] {
        let points =
            self == .default
            ? ResizeSampling.unalignCorners.grid(input: input, output: output) : grid(input: input, output: output)
        return points.map { Swift.min(($0 + 0.5).rounded(.down), Double(input - 1)) }
    }

    /// `x` resized along `axis` to `count` elements: linear interpolation at ``grid(input:output:)``
    /// or, with `nearest`, the elements at ``nearestSources(input:output:)``.
    ///
    /// Linear interpolation computes in `float32` and converts back to an integer `x`'s type.
    ///
    /// - Throws: ``OperandError`` when the axis is empty and `count` is not.
    func resampled(_ x: MLTensor, axis: Int, count: Int, nearest: Bool) throws -> MLTensor {
        let size = x.shape[axis]
        try require(size > 0 || count == 0, "cannot resize an axis of size \(size) to \(count)")
        if nearest {
            let sources = nearestSources(input: size, output: count)
            return try MILOp.nearest(x, axis: axis, count: count) { sources[$0] }
        }
        let result = try MILOp.linearResample(x.asFloat, axis: axis, grid: grid(input: size, output: count))
        return x.kernelType.isFloatingPoint ? result : result.converted(to: x.kernelType)
    }
}
