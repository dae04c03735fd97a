import TesseraKernels
import TesseraTensor

/// The legacy data-reorganization layers over `[Seq, Batch, C, H, W]` (or `[…, C, H, W]`):
/// `reshape`, `flatten`, `permute`, `concat`, `split`, `slice`, `crop`, `sequenceRepeat`,
/// `reorganizeData` and `copy`.
extension NeuralNetworkLayerType {
    static let shapeLayers: [NeuralNetworkLayerType] =
        [
            NeuralNetworkLayerType(field: 300, cost: .dataMovement) { layer in try legacyReshape(&layer) },
            NeuralNetworkLayerType(field: 301, cost: .dataMovement) { layer in
                // FlattenLayerParams: mode = 1 (CHANNEL_FIRST, CHANNEL_LAST).
                try layer.requireCounts(inputs: 1...1)
                let channelLast = layer.params.int(1) == 1
                let name = layer.layer.name
                return { args in
                    var (x, leading) = try args[0].asFloat.asImageBatch(layer: name)
                    if channelLast { x = x.transposed(permutation: [0, 2, 3, 1]) }
                    let n = x.shape[0]
                    return [x.reshapedIfNeeded(to: leading + [x.scalarCount / Swift.max(n, 1), 1, 1])]
                }
            },
            NeuralNetworkLayerType(field: 310, cost: .dataMovement) { layer in
                // PermuteLayerParams: axis = 1, a permutation of [Seq, C, H, W] (Batch stays).
                try layer.requireCounts(inputs: 1...1)
                let axes = try layer.ints(1)
                guard axes.isEmpty || axes.sorted() == [0, 1, 2, 3] else {
                    throw layer.invalid("axis must be a permutation of [0, 1, 2, 3], got \(axes)")
                }
                let rank5 = [0, 2, 3, 4]
                let perm =
                    axes.isEmpty
                    ? [0, 1, 2, 3, 4] : [rank5[axes[0]], 1, rank5[axes[1]], rank5[axes[2]], rank5[axes[3]]]
                let name = layer.layer.name
                return { args in
                    let x = args[0].asFloat
                    try require(
                        x.rank == 5, "\(name): permute needs a rank-5 [Seq, Batch, C, H, W] input, got \(x.shape)")
                    return [x.transposed(permutation: perm)]
                }
            },
            NeuralNetworkLayerType(field: 320, cost: .dataMovement) { layer in
                // ConcatLayerParams: sequenceConcat = 100 (axis −5, else axis −3).
                try layer.requireCounts(inputs: 1...Int.max)
                let sequence = layer.params.bool(100)
                let count = layer.inputCount
                return { args in
                    let values = (0..<count).map { args[$0].asFloat }
                    let rank = values[0].rank
                    try require(
                        rank >= (sequence ? 5 : 3), "concat needs rank ≥ \(sequence ? 5 : 3), got \(values[0].shape)")
                    return [MLTensor(concatenating: values, alongAxis: rank - (sequence ? 5 : 3))]
                }
            },
            NeuralNetworkLayerType(field: 330, cost: .dataMovement) { layer in
                // SplitLayerParams: nOutputs = 1, equal parts along axis −3.
                try layer.requireCounts(inputs: 1...1, outputs: nil)
                let count = layer.layer.outputs.count
                let name = layer.layer.name
                return { args in
                    let x = args[0].asFloat
                    try require(
                        x.rank >= 3 && x.shape[x.rank - 3] % count == 0,
                        "\(name): cannot split \(x.shape) into \(count) equal parts along axis -3")
                    return x.split(count: count, alongAxis: x.rank - 3)
                }
            },
            NeuralNetworkLayerType(field: 350, cost: .dataMovement) { layer in
                // SliceLayerParams: startIndex = 1, endIndex = 2, stride = 3, axis = 4 (C, H, W).
                try layer.requireCounts(inputs: 1...1)
                let p = layer.params
                let (start, end) = (p.int(1) ?? 0, p.int(2) ?? 0)
                let stride = Swift.max(p.size(3) ?? 1, 1)
                let axisFromEnd = 3 - (p.int(4) ?? 0)
                guard (1...3).contains(axisFromEnd) else { throw layer.invalid("unknown slice axis") }
                return { args in
                    let x = args[0].asFloat
                    try require(x.rank >= axisFromEnd, "slice along axis -\(axisFromEnd) of \(x.shape)")
                    let axis = x.rank - axisFromEnd
                    let size = x.shape[axis]
                    let first = start < 0 ? start + size : start
                    let last = end < 0 ? end + size : end
                    try require(
                        first >= 0 && first < last && last <= size,
                        "slice [\(start), \(end)) is empty or outside axis -\(axisFromEnd) of \(x.shape)")
                    var starts = [Int](repeating: 0, count: x.rank)
                    var steps = [Int](repeating: 1, count: x.rank)
                    var counts = x.shape
                    starts[axis] = first
                    steps[axis] = stride
                    counts[axis] = (last - first + stride - 1) / stride
                    return [x.sliced(starts: starts, steps: steps, counts: counts)]
                }
            },
            NeuralNetworkLayerType(field: 190, cost: .dataMovement) { layer in try crop(&layer) },
            NeuralNetworkLayerType(field: 340, cost: .dataMovement) { layer in
                // SequenceRepeatLayerParams: nRepetitions = 1 along axis −5.
                try layer.requireCounts(inputs: 1...1)
                let count = Swift.max(layer.params.size(1) ?? 1, 1)
                return { args in
                    let x = args[0].asFloat
                    try require(x.rank == 5, "sequenceRepeat needs a rank-5 input, got \(x.shape)")
                    return [x.tiled(multiples: [count, 1, 1, 1, 1])]
                }
            },
            NeuralNetworkLayerType(field: 345, cost: .dataMovement) { layer in try reorganizeData(&layer) },
            NeuralNetworkLayerType(field: 600, cost: .dataMovement) { layer in
                try layer.requireCounts(inputs: 1...1)
                return { args in [args[0]] }
            },
        ] + shapeNDLayers

    /// `ReshapeLayerParams`: `targetShape = 1` (`[C, H, W]` or `[Seq, C, H, W]`), `mode = 2`
    /// (CHANNEL_FIRST, CHANNEL_LAST); the result is `[Seq, 1, C, H, W]`.
    static func legacyReshape(_ layer: inout NeuralNetworkLayerLowering) throws -> LoweredCompute {
        try layer.requireCounts(inputs: 1...1)
        let target = try layer.ints(1)
        let chw = Array(target.suffix(3))
        guard target.count == 3 || target.count == 4, target.allSatisfy({ $0 >= 1 }),
            let chwCount = chw.checkedElementCount
        else {
            throw layer.invalid("targetShape must be [C, H, W] or [Seq, C, H, W] of countable sizes, got \(target)")
        }
        let channelLast = layer.params.int(2) == 1
        let name = layer.layer.name
        return { args in
            var x = args[0].asFloat
            try require(x.rank >= 3, "\(name): reshape needs rank ≥ 3, got \(x.shape)")
            if x.rank < 5 { x = x.reshapedIfNeeded(to: [Int](repeating: 1, count: 5 - x.rank) + x.shape) }
            let sequence = target.count == 4 ? target[0] : x.scalarCount / chwCount
            if channelLast {
                let hwc = x.transposed(permutation: [0, 1, 3, 4, 2])
                let shaped = hwc.reshaped(to: [sequence, 1, chw[1], chw[2], chw[0]])
                return [shaped.transposed(permutation: [0, 1, 4, 2, 3])]
            }
            return [x.reshaped(to: [sequence, 1] + chw)]
        }
    }

    /// `CropLayerParams`: `cropAmounts = 1` (`[H, W]` edges) with one input, or `offset = 5`
    /// `[H, W]` with the second input giving the size.
    static func crop(_ layer: inout NeuralNetworkLayerLowering) throws -> LoweredCompute {
        try layer.requireCounts(inputs: 1...2)
        if layer.inputCount == 2 {
            let offset = try layer.ints(5)
            guard offset.count == 2, offset.allSatisfy({ $0 >= 0 }) else {
                throw layer.invalid("offset must be two values [H, W], got \(offset)")
            }
            return { args in
                let (x, reference) = (args[0].asFloat, args[1])
                try require(x.rank >= 2 && reference.rank >= 2, "crop needs rank ≥ 2 inputs")
                let size = Array(reference.shape.suffix(2))
                return [try cropped(x, top: offset[0], left: offset[1], height: size[0], width: size[1])]
            }
        }
        guard let amounts = try layer.message(1, "BorderAmounts") else { throw layer.invalid("cropAmounts is missing") }
        let edges = try amounts.messages(10, "EdgeSizes").map { ($0.size(1) ?? 0, $0.size(2) ?? 0) }
        guard edges.count == 2 else { throw layer.invalid("cropAmounts needs two edges [H, W]") }
        return { args in
            let x = args[0].asFloat
            try require(x.rank >= 2, "crop needs rank ≥ 2, got \(x.shape)")
            let (h, w) = (x.shape[x.rank - 2], x.shape[x.rank - 1])
            return [
                try cropped(
                    x, top: edges[0].0, left: edges[1].0, height: h - edges[0].0 - edges[0].1,
                    width: w - edges[1].0 - edges[1].1)
            ]
        }
    }

    /// The `height × width` window of the last two axes at `(top, left)`.
    static func cropped(_ x: MLTensor, top: Int, left: Int, height: Int, width: Int) throws -> MLTensor {
        let (h, w) = (x.shape[x.rank - 2], x.shape[x.rank - 1])
        try require(
            height > 0 && width > 0 && top + height <= h && left + width <= w,
            "cannot crop \(height)×\(width) at (\(top), \(left)) from \(x.shape)")
        return x.sliced(
            starts: [Int](repeating: 0, count: x.rank - 2) + [top, left], steps: [Int](repeating: 1, count: x.rank),
            counts: Array(x.shape.dropLast(2)) + [height, width])
    }

    /// `ReorganizeDataLayerParams`: `mode = 1` (SPACE_TO_DEPTH, DEPTH_TO_SPACE, PIXEL_SHUFFLE),
    /// `blockSize = 2`. Space-to-depth and depth-to-space order channels block-major
    /// (`(bh · b + bw) · C + c`); pixel shuffle channel-major (`c · b² + bh · b + bw`).
    static func reorganizeData(_ layer: inout NeuralNetworkLayerLowering) throws -> LoweredCompute {
        try layer.requireCounts(inputs: 1...1)
        let mode = layer.params.int(1) ?? 0
        let b = layer.params.size(2) ?? 0
        guard (0...2).contains(mode), b >= 1 else { throw layer.invalid("mode \(mode) with blockSize \(b)") }
        let name = layer.layer.name
        return { args in
            let (x, leading) = try args[0].asFloat.asImageBatch(layer: name)
            let (n, c, h, w) = (x.shape[0], x.shape[1], x.shape[2], x.shape[3])
            let y: MLTensor
            if mode == 0 {
                try require(h % b == 0 && w % b == 0, "\(name): \(x.shape) does not divide into \(b)×\(b) blocks")
                y = x.reshaped(to: [n, c, h / b, b, w / b, b]).transposed(permutation: [0, 3, 5, 1, 2, 4])
                    .reshaped(to: [n, c * b * b, h / b, w / b])
            } else {
                try require(c % (b * b) == 0, "\(name): \(c) channels do not divide by \(b * b)")
                let parts =
                    mode == 1
                    ? x.reshaped(to: [n, b, b, c / (b * b), h, w]).transposed(permutation: [0, 3, 4, 1, 5, 2])
                    : x.reshaped(to: [n, c / (b * b), b, b, h, w]).transposed(permutation: [0, 1, 4, 2, 5, 3])
                y = parts.reshaped(to: [n, c / (b * b), h * b, w * b])
            }
            return [y.restoringLeading(leading)]
        }
    }
}
