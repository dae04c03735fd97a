import TesseraTensor

/// The rank-N shape layers of spec 4: `concatND`, `splitND`, `transpose`, `squeeze`,
/// `expandDims`, `flattenTo2D`, `reshapeStatic`, `reshapeLike`, `reshapeDynamic`,
/// `rankPreservingReshape`, `sliceStatic`, `sliceDynamic`, `sliceBySize`, `tile`, `stack`,
/// `getShape`, `broadcastTo*`, `constantPad` and `reverse`.
extension NeuralNetworkLayerType {
    static let shapeNDLayers: [NeuralNetworkLayerType] = [
        NeuralNetworkLayerType(field: 980, cost: .dataMovement) { layer in
            // ConcatNDLayerParams: axis = 1, interleave = 2.
            try layer.requireCounts(inputs: 1...Int.max)
            let interleave = layer.params.bool(2)
            let axis = layer.params.int(1) ?? 0
            let count = layer.inputCount
            return { args in
                let values = (0..<count).map { args[$0].asFloat }
                if interleave { return [try MILOp.interleavedConcat(values, axis: axis)] }
                return [MLTensor(concatenating: values, alongAxis: try values[0].axis(axis, op: "concatND"))]
            }
        },
        NeuralNetworkLayerType(field: 975, cost: .dataMovement) { layer in
            // SplitNDLayerParams: axis = 1, numSplits = 2, splitSizes = 3.
            try layer.requireCounts(inputs: 1...1, outputs: nil)
            let axis = layer.params.int(1) ?? 0
            let sizes = try layer.ints(3)
            let count = layer.layer.outputs.count
            guard sizes.isEmpty || sizes.count == count else {
                throw layer.invalid("\(sizes.count) splitSizes for \(count) outputs")
            }
            return { args in
                let x = args[0].asFloat
                let a = try x.axis(axis, op: "splitND")
                if sizes.isEmpty {
                    // numSplits parts, the first `size % count` one longer (NumPy's array_split).
                    let size = x.shape[a]
                    try require(size >= count, "cannot split \(x.shape) into \(count) parts along \(axis)")
                    if size % count == 0 { return x.split(count: count, alongAxis: a) }
                    let parts = (0..<count).map { size / count + ($0 < size % count ? 1 : 0) }
                    return x.split(sizes: parts, alongAxis: a)
                }
                return x.split(sizes: sizes, alongAxis: a)
            }
        },
        NeuralNetworkLayerType(field: 985, cost: .dataMovement) { layer in
            // TransposeLayerParams: axes = 1.
            try layer.requireCounts(inputs: 1...1)
            let axes = try layer.ints(1)
            return { args in
                let x = args[0]
                try require(axes.sorted() == Array(0..<x.rank), "axes \(axes) are not a permutation for \(x.shape)")
                return [x.transposed(permutation: axes)]
            }
        },
        NeuralNetworkLayerType(field: 1120, cost: .dataMovement) { layer in
            // SqueezeLayerParams: axes = 1, squeezeAll = 2.
            try layer.requireCounts(inputs: 1...1)
            let axes = try layer.ints(1)
            let all = layer.params.bool(2)
            return { args in
                let x = args[0]
                if all { return [x.reshapedIfNeeded(to: x.shape.filter { $0 != 1 })] }
                let normalized = try x.axes(axes, op: "squeeze")
                try require(normalized.allSatisfy { x.shape[$0] == 1 }, "squeeze axes \(axes) of \(x.shape) are not 1")
                return [
                    x.reshapedIfNeeded(
                        to: x.shape.enumerated().filter { !normalized.contains($0.offset) }.map(\.element))
                ]
            }
        },
        NeuralNetworkLayerType(field: 1125, cost: .dataMovement) { layer in
            // ExpandDimsLayerParams: axes = 1 (in the result's rank).
            try layer.requireCounts(inputs: 1...1)
            let axes = try layer.ints(1)
            return { args in
                let x = args[0]
                let rank = x.rank + axes.count
                let normalized = Set(axes.map { $0 < 0 ? $0 + rank : $0 })
                try require(
                    normalized.count == axes.count && normalized.allSatisfy { (0..<rank).contains($0) },
                    "expandDims axes \(axes) for \(x.shape)")
                var shape: [Int] = []
                var source = x.shape.makeIterator()
                for axis in 0..<rank { shape.append(normalized.contains(axis) ? 1 : source.next()!) }
                return [x.reshapedIfNeeded(to: shape)]
            }
        },
        NeuralNetworkLayerType(field: 1130, cost: .dataMovement) { layer in
            // FlattenTo2DLayerParams: axis = 1.
            try layer.requireCounts(inputs: 1...1)
            let axis = layer.params.int(1) ?? 0
            return { args in
                let x = args[0]
                let a = axis < 0 ? axis + x.rank : axis
                try require((0...x.rank).contains(a), "flattenTo2D axis \(axis) for \(x.shape)")
                return [x.reshapedIfNeeded(to: [x.shape.prefix(a).reduce(1, *), x.shape.dropFirst(a).reduce(1, *)])]
            }
        },
        NeuralNetworkLayerType(field: 1140, cost: .dataMovement) { layer in
            // ReshapeStaticLayerParams: targetShape = 1.
            try layer.requireCounts(inputs: 1...1)
            let target = try layer.ints(1)
            return { args in [args[0].reshaped(to: try MILOp.resolvedShape(target, of: args[0].shape))] }
        },
        NeuralNetworkLayerType(field: 1150, cost: .dataMovement) { layer in
            // RankPreservingReshapeLayerParams: targetShape = 1 (0 copies, −1 infers).
            try layer.requireCounts(inputs: 1...1)
            let target = try layer.ints(1)
            return { args in
                try require(target.count == args[0].rank, "targetShape \(target) for \(args[0].shape) changes the rank")
                return [args[0].reshaped(to: try MILOp.resolvedShape(target, of: args[0].shape))]
            }
        },
        NeuralNetworkLayerType(field: 1135, cost: .dataMovement) { layer in
            try layer.requireCounts(inputs: 2...2)
            return { args in [args[0].reshaped(to: args[1].shape)] }
        },
        NeuralNetworkLayerType(field: 1145, cost: .dataMovement, valueReads: [1]) { layer in
            try layer.requireCounts(inputs: 2...2)
            return { args in
                let target = try RuntimeInts.operand(1).values(args)
                return [args[0].reshaped(to: try MILOp.resolvedShape(target, of: args[0].shape))]
            }
        },
        NeuralNetworkLayerType(field: 995, cost: .dataMovement) { layer in
            // SliceStaticLayerParams: beginIds = 1, beginMasks = 2, endIds = 3, endMasks = 4,
            // strides = 5, squeezeMasks = 6.
            try layer.requireCounts(inputs: 1...1)
            let spec = try SliceSpec(layer, beginField: 1)
            return { args in [try spec.apply(args[0], begin: spec.begin)] }
        },
        NeuralNetworkLayerType(field: 1000, cost: .dataMovement, valueReads: [1, 2]) { layer in
            // SliceDynamicLayerParams: the begin ids are the second input; endIds = 3 … as static,
            // and a third input, when given, replaces endIds.
            try layer.requireCounts(inputs: 2...3)
            let spec = try SliceSpec(layer, beginField: nil)
            let count = layer.inputCount
            return { args in
                var copy = spec
                if count == 3 { copy.end = try RuntimeInts.operand(2).values(args) }
                return [try copy.apply(args[0], begin: try RuntimeInts.operand(1).values(args))]
            }
        },
        NeuralNetworkLayerType(field: 1470, cost: .dataMovement, valueReads: [1]) { layer in
            // SliceBySizeLayerParams: size = 2, axis = 3; the begin index is the second input.
            try layer.requireCounts(inputs: 2...2)
            let size = layer.params.int(2) ?? 0
            let axis = layer.params.int(3) ?? 0
            return { args in
                let x = args[0]
                let a = try x.axis(axis, op: "sliceBySize")
                let begin = try RuntimeInts.operand(1).values(args).first ?? 0
                let start = begin < 0 ? begin + x.shape[a] : begin
                let count = size < 0 ? x.shape[a] - start : size
                try require(
                    start >= 0 && count >= 0 && start + count <= x.shape[a],
                    "slice of \(size) at \(begin) along \(axis) of \(x.shape)")
                return [x.narrowed(alongAxis: a, start: start, count: count)]
            }
        },
        NeuralNetworkLayerType(field: 920, cost: .dataMovement, valueReads: [1]) { layer in
            // TileLayerParams: reps = 1; a second input, when given, is the reps (read when
            // the prediction is built).
            try layer.requireCounts(inputs: 1...2)
            let fixed = try layer.ints(1)
            let repsIsInput = layer.inputCount == 2
            return { args in
                let input = args[0]
                var reps = repsIsInput ? try RuntimeInts.operand(1).values(args) : fixed
                // NumPy's tile: fewer reps than axes repeat the last axes, more add leading ones.
                let rank = Swift.max(reps.count, input.rank)
                reps = Array(repeating: 1, count: rank - reps.count) + reps
                let x = input.reshapedIfNeeded(to: Array(repeating: 1, count: rank - input.rank) + input.shape)
                try require(!reps.isEmpty && reps.allSatisfy { $0 >= 1 }, "reps \(reps) for \(x.shape)")
                return [x.tiled(multiples: reps)]
            }
        },
        NeuralNetworkLayerType(field: 925, cost: .dataMovement) { layer in
            // StackLayerParams: axis = 1.
            try layer.requireCounts(inputs: 1...Int.max)
            let axis = layer.params.int(1) ?? 0
            let count = layer.inputCount
            return { args in
                let values = (0..<count).map { args[$0].asFloat }
                let rank = values[0].rank + 1
                let a = axis < 0 ? axis + rank : axis
                try require((0..<rank).contains(a), "stack axis \(axis) for rank \(rank - 1)")
                return [MLTensor(stacking: values, alongAxis: a)]
            }
        },
        NeuralNetworkLayerType(field: 1065, cost: .dataMovement) { layer in
            try layer.requireCounts(inputs: 1...1)
            return { args in
                [MLTensor(shape: [args[0].rank], scalars: args[0].shape.map(Float.init), scalarType: Float.self)]
            }
        },
        NeuralNetworkLayerType(field: 1105, cost: .dataMovement) { layer in
            // BroadcastToStaticLayerParams: targetShape = 1.
            try layer.requireCounts(inputs: 1...1)
            let target = try layer.ints(1)
            return { args in [args[0].broadcast(to: target)] }
        },
        NeuralNetworkLayerType(field: 1100, cost: .dataMovement) { layer in
            try layer.requireCounts(inputs: 2...2)
            return { args in [args[0].broadcast(to: args[1].shape)] }
        },
        NeuralNetworkLayerType(field: 1110, cost: .dataMovement, valueReads: [1]) { layer in
            try layer.requireCounts(inputs: 2...2)
            return { args in [args[0].broadcast(to: try RuntimeInts.operand(1).values(args))] }
        },
        NeuralNetworkLayerType(field: 1155, cost: .dataMovement) { layer in
            // ConstantPaddingLayerParams: value = 1, padAmounts = 2 (before/after pairs for the
            // last axes), padToGivenOutputSizeMode = 3.
            try layer.requireCounts(inputs: 1...1)
            let value = layer.params.float(1) ?? 0
            let amounts = try layer.ints(2)
            guard amounts.count % 2 == 0, amounts.allSatisfy({ $0 >= 0 }) else {
                throw layer.invalid("padAmounts must be before/after pairs, got \(amounts)")
            }
            let toSize = layer.params.bool(3)
            return { args in
                let x = args[0].asFloat
                let pairs = amounts.count / 2
                try require(pairs <= x.rank, "\(pairs) pad pairs for \(x.shape)")
                var sizes = [(before: Int, after: Int)](repeating: (0, 0), count: x.rank)
                for i in 0..<pairs {
                    let axis = x.rank - pairs + i
                    var (before, after) = (amounts[2 * i], amounts[2 * i + 1])
                    if toSize {
                        // Each pair is a target size (0 keeps the axis), filled as the one non-zero side says.
                        let target = Swift.max(before, after)
                        let extra = target == 0 ? 0 : target - x.shape[axis]
                        try require(extra >= 0, "target size \(target) below axis \(axis) of \(x.shape)")
                        (before, after) = before != 0 ? (extra, 0) : (0, extra)
                    }
                    sizes[axis] = (before, after)
                }
                return [x.padded(forSizes: sizes, with: value)]
            }
        },
        NeuralNetworkLayerType(field: 960, cost: .dataMovement) { layer in
            // ReverseLayerParams: reverseDim = 1.
            try layer.requireCounts(inputs: 1...1)
            let flags = try layer.ints(1)
            return { args in
                let x = args[0]
                try require(flags.count == x.rank, "reverseDim needs \(x.rank) flags, got \(flags.count)")
                let axes = flags.enumerated().filter { $0.element != 0 }.map(\.offset)
                return [axes.isEmpty ? x : x.reversed(alongAxes: axes)]
            }
        },
    ]
}

/// The parameters of `sliceStatic` / `sliceDynamic`, applied with TensorFlow's
/// `strided_slice` rules (masks, negative indices, squeezing).
struct SliceSpec: Sendable {
    var begin: [Int]
    var end: [Int]
    var strides: [Int]
    var beginMasks: [Bool]
    var endMasks: [Bool]
    var squeezeMasks: [Bool]

    init(_ layer: NeuralNetworkLayerLowering, beginField: Int?) throws {
        begin = try beginField.map { try layer.ints($0) } ?? []
        end = try layer.ints(3)
        strides = try layer.ints(5)
        beginMasks = try layer.ints(2).map { $0 != 0 }
        endMasks = try layer.ints(4).map { $0 != 0 }
        squeezeMasks = try layer.ints(6).map { $0 != 0 }
    }

    /// `x[begin:end:strides]` with the masks.
    func apply(_ x: MLTensor, begin: [Int]) throws -> MLTensor {
        let rank = x.rank
        try require(begin.count == rank && end.count == rank, "begin \(begin) / end \(end) need \(rank) values")
        var starts: [Int] = []
        var steps: [Int] = []
        var counts: [Int] = []
        var kept: [Int] = []
        for axis in 0..<rank {
            let size = x.shape[axis]
            let step = axis < strides.count ? strides[axis] : 1
            try require(step != 0, "stride 0 on axis \(axis)")
            if axis < squeezeMasks.count && squeezeMasks[axis] {
                let index = begin[axis] < 0 ? begin[axis] + size : begin[axis]
                try require(index >= 0 && index < size, "index \(begin[axis]) outside axis \(axis) of \(x.shape)")
                starts.append(index)
                steps.append(1)
                counts.append(1)
                continue
            }
            let masked = { (masks: [Bool]) in axis < masks.count && masks[axis] }
            let range = MILOp.pythonSlice(
                size: size, start: masked(beginMasks) ? nil : begin[axis], stop: masked(endMasks) ? nil : end[axis],
                step: step)
            starts.append(range.count > 0 ? range.start : 0)
            steps.append(step)
            counts.append(range.count)
            kept.append(axis)
        }
        let sliced = x.sliced(starts: starts, steps: steps, counts: counts)
        return sliced.reshapedIfNeeded(to: kept.map { counts[$0] })
    }
}
