import TesseraTensor

/// Resizing the last two axes: nearest-neighbour and bilinear upsampling, and cropping. Index
/// and weight tables depend on the input size, so they are built per prediction (they are
/// tiny) and applied with gathers.
extension MILOp {
    static let resizingOps: [MILOp] = [
        MILOp("upsample_nearest_neighbor", batch: .leadingAxis, cost: .elementwise) { lowering in
            let x = try lowering.tensor("x")
            let scaleHeight = try lowering.double("scale_factor_height") ?? 1
            let scaleWidth = try lowering.double("scale_factor_width") ?? 1
            guard scaleHeight > 0, scaleWidth > 0 else { throw lowering.invalid("scale factors must be positive") }
            return { args in
                let v = args[x]
                try require(v.rank >= 3, "needs rank ≥ 3, got \(v.shape)")
                let (h, w) = (v.shape[v.rank - 2], v.shape[v.rank - 1])
                let outH = try LoweredFunction.computedCount(Double(h) * scaleHeight, "the scaled height")
                let outW = try LoweredFunction.computedCount(Double(w) * scaleWidth, "the scaled width")
                // The scale is recomputed from the sizes (coremltools' tests pin this down for
                // fractional scales): source = floor(i · in / out).
                let rows = try nearest(v, axis: v.rank - 2, count: outH) { Double($0 * h) / Double(Swift.max(outH, 1)) }
                return [
                    try nearest(rows, axis: v.rank - 1, count: outW) { Double($0 * w) / Double(Swift.max(outW, 1)) }
                ]
            }
        },
        MILOp("upsample_bilinear", batch: .leadingAxis, cost: .elementwise) { lowering in
            let x = try lowering.tensor("x")
            let scaleHeight = try lowering.double("scale_factor_height") ?? 1
            let scaleWidth = try lowering.double("scale_factor_width") ?? 1
            let alignCorners = try lowering.bool("align_corners") ?? true
            let halfPixel = try lowering.bool("half_pixel_centers") ?? !alignCorners
            guard scaleHeight > 0, scaleWidth > 0 else { throw lowering.invalid("scale factors must be positive") }
            return { args in
                let v = args[x].asFloat
                try require(v.rank >= 3, "needs rank ≥ 3, got \(v.shape)")
                var result = v
                for (axis, scale) in [(v.rank - 2, scaleHeight), (v.rank - 1, scaleWidth)] {
                    let size = v.shape[axis]
                    let count = try LoweredFunction.computedCount(Double(size) * scale, "the scaled size")
                    // coremltools' grid: corners aligned, half-pixel centres, or plain i·in/out.
                    let grid = (0..<count).map { i -> Double in
                        if alignCorners { return count > 1 ? Double(i) * Double(size - 1) / Double(count - 1) : 0 }
                        let spacing = Double(size) / Double(count)
                        return halfPixel ? Double(i) * spacing + 0.5 * spacing - 0.5 : Double(i) * spacing
                    }
                    result = try linearResample(result, axis: axis, grid: grid)
                }
                return [result]
            }
        },
        MILOp("crop", batch: .leadingAxis, cost: .elementwise) { lowering in
            let x = try lowering.tensor("x")
            let height = try lowering.required(lowering.ints("crop_height"), "crop_height")
            let width = try lowering.required(lowering.ints("crop_width"), "crop_width")
            guard height.count == 2, width.count == 2, (height + width).allSatisfy({ $0 >= 0 }) else {
                throw lowering.invalid("crop_height and crop_width need two non-negative values each")
            }
            return { args in
                let v = args[x]
                try require(v.rank >= 2, "needs rank ≥ 2, got \(v.shape)")
                let (h, w) = (v.shape[v.rank - 2], v.shape[v.rank - 1])
                try require(
                    height[0] + height[1] <= h && width[0] + width[1] <= w, "the crop is larger than \(v.shape)")
                var starts = [Int](repeating: 0, count: v.rank)
                var counts = v.shape
                (starts[v.rank - 2], counts[v.rank - 2]) = (height[0], h - height[0] - height[1])
                (starts[v.rank - 1], counts[v.rank - 1]) = (width[0], w - width[0] - width[1])
                for axis in [v.rank - 2, v.rank - 1] where counts[axis] == 0 { starts[axis] = 0 }
                return [v.sliced(starts: starts, steps: [Int](repeating: 1, count: v.rank), counts: counts)]
            }
        },
        MILOp("resize_nearest_neighbor", batch: .leadingAxis, cost: .elementwise) { lowering in
            let x = try lowering.tensor("x")
            let outH = try lowering.required(lowering.int("target_size_height"), "target_size_height")
            let outW = try lowering.required(lowering.int("target_size_width"), "target_size_width")
            return { args in
                let v = args[x]
                try require(v.rank >= 3, "needs rank ≥ 3, got \(v.shape)")
                let (h, w) = (v.shape[v.rank - 2], v.shape[v.rank - 1])
                let rows = try nearest(v, axis: v.rank - 2, count: outH) { Double($0) * Double(h) / Double(outH) }
                return [try nearest(rows, axis: v.rank - 1, count: outW) { Double($0) * Double(w) / Double(outW) }]
            }
        },
    ]

    /// Linear interpolation along `axis` at the (clamped) fractional positions `grid`.
    static func linearResample(_ x: MLTensor, axis: Int, grid: [Double]) throws -> MLTensor {
        let size = x.shape[axis]
        try require(size > 0 || grid.isEmpty, "cannot resample an empty axis")
        // Positions come from scales and boxes a model or its inputs hold: NaN would trap below.
        try require(grid.allSatisfy(\.isFinite), "a resampling position is not finite")
        if grid.count == size && grid.enumerated().allSatisfy({ Double($0.offset) == $0.element }) { return x }
        var lower: [Int32] = []
        var upper: [Int32] = []
        var weights: [Float] = []
        for point in grid {
            let g = Swift.min(Swift.max(point, 0), Double(size - 1))
            let i0 = Int(g.rounded(.down))
            lower.append(Int32(i0))
            upper.append(Int32(Swift.min(i0 + 1, size - 1)))
            weights.append(Float(g - Double(i0)))
        }
        let count = grid.count
        let a = x.gathering(
            atIndices: MLTensor(shape: [count], scalars: lower, scalarType: Int32.self), alongAxis: axis)
        let b = x.gathering(
            atIndices: MLTensor(shape: [count], scalars: upper, scalarType: Int32.self), alongAxis: axis)
        var weightShape = [Int](repeating: 1, count: x.rank - axis)
        weightShape[0] = count
        let w = MLTensor(shape: weightShape, scalars: weights, scalarType: Float.self)
        // a + (b - a)·w
        return a + (b - a) * w
    }

    /// `count` elements along `axis`, element `i` taken from `min(floor(source(i)), size - 1)`.
    static func nearest(_ x: MLTensor, axis: Int, count: Int, source: (Int) -> Double) throws -> MLTensor {
        let size = x.shape[axis]
        try require(count >= 0 && (size > 0 || count == 0), "cannot resize an axis of size \(size) to \(count)")
        let sources = try (0..<count).map {
            try LoweredFunction.computedIndex(source($0).rounded(.down), "a resampling position")
        }
        if count == size && sources.enumerated().allSatisfy({ $0.element == $0.offset }) { return x }
        let indices = sources.map { Int32(Swift.min(Swift.max($0, 0), size - 1)) }
        return x.gathering(
            atIndices: MLTensor(shape: [count], scalars: indices, scalarType: Int32.self), alongAxis: axis)
    }
}
