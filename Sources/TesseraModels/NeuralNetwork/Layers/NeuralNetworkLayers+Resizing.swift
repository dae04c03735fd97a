import TesseraTensor

/// `resizeBilinear` and `cropResize`, on the ML Program ops' implementations
/// (``ResizeSampling`` and `crop_resize`'s ``MILOp/CropGeometry``), which coremltools
/// converts to these layers:
///
/// - `resizeBilinear` (`ResizeBilinearLayerParams`: `targetSize = 1` `[H, W]`, default
///   `[1, 1]`; `mode = 2`, a `SamplingMode` whose `samplingMethod = 1` defaults to
///   `STRICT_ALIGN_ENDPOINTS_MODE`): the last two axes of a rank ≥ 3 blob;
/// - `cropResize` (`CropResizeLayerParams`: `targetSize = 1`, `normalizedCoordinates = 2`,
///   `mode = 3`, `boxIndicesMode = 4` (a `BoxCoordinatesMode` whose `boxMode = 1` is
///   `CORNERS_HEIGHT_FIRST` … `CENTER_SIZE_WIDTH_FIRST`), `spatialScale = 5`, default 1):
///   boxes `[N, 1, 4, 1, 1]` (every box from every image) or `[N, 1, 5, 1, 1]` (an image
///   index first) cut from `[1, B, C, H, W]` (or `[B, C, H, W]`), `[N, B, C, H', W']` or
///   `[N, 1, C, H', W']`. Only the two corner-aligned modes (`STRICT_ALIGN_ENDPOINTS_MODE`,
///   `ALIGN_ENDPOINTS_MODE`) have a meaning for a box; the others fail the load. A point
///   outside the image reads 0.
extension NeuralNetworkLayerType {
    static let resizingLayers: [NeuralNetworkLayerType] = [
        NeuralNetworkLayerType(field: 211, cost: .elementwise) { layer in
            try layer.requireCounts(inputs: 1...1)
            let (height, width) = try targetSize(&layer, field: 1)
            let sampling = try samplingMode(&layer, field: 2)
            return { args in
                let x = args[0]
                try require(x.rank >= 3, "resizeBilinear needs an input of rank 3 or more, got \(x.shape)")
                let rows = try sampling.resampled(x.asFloat, axis: x.rank - 2, count: height, nearest: false)
                return [try sampling.resampled(rows, axis: x.rank - 1, count: width, nearest: false)]
            }
        },
        NeuralNetworkLayerType(field: 212, cost: .elementwise) { layer in
            try layer.requireCounts(inputs: 2...2)
            let (height, width) = try targetSize(&layer, field: 1)
            let sampling = try samplingMode(&layer, field: 3)
            guard sampling == .strictAlignCorners || sampling == .alignCorners else {
                throw layer.unsupported("cropResize with sampling method \(sampling.rawValue)")
            }
            let boxMode = try layer.message(4, "boxIndicesMode")?.int(1) ?? 0
            let modes = [
                "CORNERS_HEIGHT_FIRST", "CORNERS_WIDTH_FIRST", "CENTER_SIZE_HEIGHT_FIRST", "CENTER_SIZE_WIDTH_FIRST",
            ]
            guard modes.indices.contains(boxMode) else { throw layer.invalid("unknown boxIndicesMode \(boxMode)") }
            let crop = MILOp.CropGeometry(
                height: height, width: width, normalized: layer.params.bool(2),
                scale: Double(layer.params.float(5) ?? 1), coordinates: modes[boxMode],
                strict: sampling == .strictAlignCorners, outside: 0)
            return { args in
                let x = args[0]
                try require(
                    x.rank == 4 || (x.rank == 5 && x.shape[0] == 1),
                    "cropResize needs an input [1, B, C, H, W], got \(x.shape)")
                return [try crop.crops(x.rank == 5 ? x.squeezingShape(at: 0) : x, roi: args[1])]
            }
        },
    ]

    /// A `targetSize` `[H, W]` (default `[1, 1]`).
    private static func targetSize(_ layer: inout NeuralNetworkLayerLowering, field: Int) throws -> (Int, Int) {
        let size = try layer.ints(field)
        if size.isEmpty { return (1, 1) }
        guard size.count == 2, size.allSatisfy({ $0 >= 1 }) else {
            throw layer.invalid("targetSize must be two positive sizes, got \(size)")
        }
        return (size[0], size[1])
    }

    /// A `SamplingMode` message's method (default `STRICT_ALIGN_ENDPOINTS_MODE`).
    private static func samplingMode(_ layer: inout NeuralNetworkLayerLowering, field: Int) throws -> ResizeSampling {
        let method = try layer.message(field, "mode")?.int(1) ?? 0
        guard let sampling = ResizeSampling(neuralNetworkMethod: method) else {
            throw layer.invalid("unknown sampling method \(method)")
        }
        return sampling
    }
}
