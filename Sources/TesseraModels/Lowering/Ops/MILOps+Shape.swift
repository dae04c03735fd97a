import TesseraTensor

/// Ops that move elements without computing on them: reshapes and transposes (views),
/// concat/split, tile, pad, reverse, and a few shape-driven builders.
extension MILOp {
    static let shapeOps: [MILOp] = {
        var ops: [MILOp] = []
        ops.append(
            MILOp("reshape", batch: .reshape, cost: .dataMovement) { lowering in
                let x = try lowering.tensor("x")
                let shape = try lowering.required(lowering.runtimeInts("shape"), "shape")
                return { args in
                    [args[x].reshapedIfNeeded(to: try resolvedShape(try shape.values(args), of: args[x].shape))]
                }
            })
        ops.append(
            MILOp(
                "transpose", batch: .from { l in .transpose(perm: try l.required(l.ints("perm"), "perm")) },
                cost: .elementwise
            ) { lowering in
                let x = try lowering.tensor("x")
                let perm = try lowering.required(lowering.ints("perm"), "perm")
                return { args in [args[x].transposed(permutation: perm)] }
            })
        ops.append(
            MILOp("reshape_like", batch: .reshape, cost: .elementwise) { lowering in
                let x = try lowering.tensor("x")
                let references = try lowering.tensors("ref_tensors")
                let begins = try lowering.required(lowering.variadicInts("begins"), "begins")
                let ends = try lowering.required(lowering.variadicInts("ends"), "ends")
                let endMasks = try lowering.required(lowering.variadicInts("end_masks"), "end_masks")
                guard begins.count == references.count, ends.count == references.count,
                    endMasks.count == references.count
                else { throw lowering.invalid("begins, ends and end_masks need one value per reference tensor") }
                return { args in
                    // The concatenation of ref_tensors[i].shape[begins[i]..<ends[i]] (to the end when masked).
                    var shape: [Int] = []
                    for (index, position) in references.enumerated() {
                        let reference = args[position].shape
                        let end = endMasks[index] != 0 ? reference.count : ends[index]
                        try require(
                            begins[index] >= 0 && begins[index] <= end && end <= reference.count,
                            "begins/ends \(begins[index])..<\(end) leave the shape \(reference)")
                        shape += reference[begins[index]..<end]
                    }
                    return [args[x].reshapedIfNeeded(to: shape)]
                }
            })
        ops.append(
            MILOp("expand_dims", batch: .reshape, cost: .elementwise) { lowering in
                let x = try lowering.tensor("x")
                let axes = try lowering.required(lowering.ints("axes"), "axes")
                return { args in [args[x].expandingShape(at: axes)] }
            })
        ops.append(
            MILOp("squeeze", batch: .reshape, cost: .elementwise) { lowering in
                let x = try lowering.tensor("x")
                let axes = try lowering.ints("axes")
                return { args in [axes.map { args[x].squeezingShape(at: $0) } ?? args[x].squeezingShape()] }
            })
        ops.append(
            MILOp("flatten2d", batch: .reshape, cost: .elementwise) { lowering in
                let x = try lowering.tensor("x")
                let axis = try lowering.int("axis") ?? 1
                return { args in
                    let v = args[x]
                    // axis in -rank...rank; a negative one counts from the end (-1: before the last axis).
                    let a = axis < 0 ? axis + v.rank : axis
                    try require(a >= 0 && a <= v.rank, "axis \(axis) is out of range for rank \(v.rank)")
                    return [v.reshapedIfNeeded(to: [v.shape[..<a].reduce(1, *), v.shape[a...].reduce(1, *)])]
                }
            })
        ops.append(
            MILOp(
                "concat", batch: .from { l in .concat(axis: try l.required(l.int("axis"), "axis")) }, cost: .elementwise
            ) { lowering in
                let values = try lowering.tensors("values")
                let axis = try lowering.required(lowering.int("axis"), "axis")
                let interleave = try lowering.bool("interleave") ?? false
                return { args in
                    // A rank-0 value counts as [1] (MIL's concat of n scalars is [n]; converters
                    // build shapes that way from `slice_by_index(squeeze_mask:)` results).
                    let type = args[values[0]].kernelType
                    let pieces = values.map {
                        let v = args[$0].converted(to: type)
                        return v.rank == 0 ? v.reshaped(to: [1]) : v
                    }
                    guard interleave else { return [MLTensor(concatenating: pieces, alongAxis: axis)] }
                    return [try MILOp.interleavedConcat(pieces, axis: axis)]
                }
            })
        ops.append(
            MILOp(
                "stack", batch: .from { l in .stack(axis: try l.required(l.int("axis"), "axis")) }, cost: .elementwise
            ) { lowering in
                let values = try lowering.tensors("values")
                let axis = try lowering.required(lowering.int("axis"), "axis")
                return { args in
                    let first = args[values[0]]
                    return [
                        MLTensor(stacking: values.map { args[$0].converted(to: first.kernelType) }, alongAxis: axis)
                    ]
                }
            })
        ops.append(
            MILOp(
                "split", batch: .from { l in .split(axis: try l.required(l.int("axis"), "axis")) }, cost: .elementwise
            ) { lowering in
                let x = try lowering.tensor("x")
                let axis = try lowering.required(lowering.int("axis"), "axis")
                let sizes = try lowering.ints("split_sizes")
                let count = try lowering.int("num_splits")
                let outputs = lowering.operation.outputs.count
                return { args in
                    if let sizes { return args[x].split(sizes: sizes, alongAxis: axis) }
                    return args[x].split(count: count ?? outputs, alongAxis: axis)
                }
            })
        ops.append(
            MILOp("tile", batch: .from { l in .tile(reps: try l.required(l.ints("reps"), "reps")) }, cost: .elementwise)
            { lowering in
                let x = try lowering.tensor("x")
                let repsParameter = try lowering.required(lowering.runtimeInts("reps"), "reps")
                return { args in
                    let reps = try repsParameter.values(args)
                    try require(reps.allSatisfy { $0 >= 0 }, "reps \(reps) must not be negative")
                    return [args[x].tiled(multiples: reps)]
                }
            })
        ops.append(
            MILOp("pad", batch: .from { l in .pad(try l.required(l.ints("pad"), "pad")) }, cost: .elementwise) {
                lowering in
                let x = try lowering.tensor("x")
                let pad = try lowering.required(lowering.ints("pad"), "pad")
                let mode = try lowering.string("mode") ?? "constant"
                let value = try lowering.double("constant_val") ?? 0
                let padded: @Sendable (MLTensor, [(before: Int, after: Int)]) -> MLTensor
                switch mode {
                case "constant": padded = { $0.padded(forSizes: $1, mode: .constant(Float(value))) }
                case "reflect": padded = { $0.padded(forSizes: $1, mode: .reflection) }
                case "replicate": padded = { $0.edgePadded(forSizes: $1) }
                case "symmetric": padded = { $0.padded(forSizes: $1, mode: .symmetric) }
                default: throw lowering.invalid("unknown pad mode '\(mode)'")
                }
                guard pad.count % 2 == 0, pad.allSatisfy({ $0 >= 0 }) else {
                    throw lowering.invalid("pad \(pad) must be non-negative (before, after) pairs")
                }
                return { args in
                    // (before, after) pairs for the last pad.count / 2 axes.
                    let v = args[x]
                    let count = pad.count / 2
                    try require(count <= v.rank, "pad \(pad) covers more axes than \(v.shape) has")
                    var sizes = [(before: Int, after: Int)](repeating: (0, 0), count: v.rank)
                    for i in 0..<count { sizes[v.rank - count + i] = (pad[2 * i], pad[2 * i + 1]) }
                    return [padded(v, sizes)]
                }
            })
        ops.append(
            MILOp("reverse", batch: .from { l in .alongAxes(try l.ints("axes")) }, cost: .elementwise) { lowering in
                let x = try lowering.tensor("x")
                let axes = try lowering.ints("axes")
                return { args in [args[x].reversed(alongAxes: axes ?? Array(0..<args[x].rank))] }
            })
        ops.append(
            MILOp("fill", batch: .notSeparable, cost: .elementwise) { lowering in
                // The shape and value may be computed at run time (read when the prediction is built).
                let shapeParameter = try lowering.required(lowering.runtimeInts("shape"), "shape")
                let valueParameter = try lowering.runtimeNumber("value") ?? .constant(0)
                let isFloat =
                    lowering.declaredType("value").map { [.float16, .float32, .float64].contains($0.dataType) } ?? true
                return { args in
                    let shape = try shapeParameter.values(args)
                    try require(shape.allSatisfy { $0 >= 0 }, "negative size in shape \(shape)")
                    let value = try valueParameter.value(args)
                    return [MLTensor.scalarConstant(value, type: isFloat ? .float32 : .int32).broadcast(to: shape)]
                }
            })
        ops.append(
            MILOp("band_part", batch: .always(.alongAxes([-2, -1])), cost: .elementwise) { lowering in
                let x = try lowering.tensor("x")
                let lower = try lowering.int("lower") ?? -1
                let upper = try lowering.int("upper") ?? -1
                return { args in [args[x].bandPart(lowerBandCount: lower, upperBandCount: upper)] }
            })
        ops.append(
            MILOp("pixel_shuffle", batch: .leadingAxis, cost: .elementwise) { lowering in
                let x = try lowering.tensor("x")
                let r = try lowering.required(lowering.int("upscale_factor"), "upscale_factor")
                guard r >= 1 else { throw lowering.invalid("upscale_factor must be positive") }
                return { args in
                    // [N, C·r², H, W] → [N, C, r, r, H, W] → [N, C, H, r, W, r] → [N, C, H·r, W·r]
                    let v = args[x]
                    try require(v.rank == 4, "needs [N, C·\(r * r), H, W], got \(v.shape)")
                    let (n, c, h, w) = (v.shape[0], v.shape[1] / (r * r), v.shape[2], v.shape[3])
                    let split = v.reshapedIfNeeded(to: [n, c, r, r, h, w]).transposed(permutation: [0, 1, 4, 2, 5, 3])
                    return [split.reshapedIfNeeded(to: [n, c, h * r, w * r])]
                }
            })
        ops.append(
            MILOp("pixel_unshuffle", batch: .leadingAxis, cost: .elementwise) { lowering in
                let x = try lowering.tensor("x")
                let r = try lowering.required(lowering.int("downscale_factor"), "downscale_factor")
                guard r >= 1 else { throw lowering.invalid("downscale_factor must be positive") }
                return { args in
                    // [N, C, H·r, W·r] → [N, C, H, r, W, r] → [N, C, r, r, H, W] → [N, C·r², H, W]
                    let v = args[x]
                    try require(v.rank == 4, "needs [N, C, H·\(r), W·\(r)], got \(v.shape)")
                    let (n, c, h, w) = (v.shape[0], v.shape[1], v.shape[2] / r, v.shape[3] / r)
                    let split = v.reshapedIfNeeded(to: [n, c, h, r, w, r]).transposed(permutation: [0, 1, 3, 5, 2, 4])
                    return [split.reshapedIfNeeded(to: [n, c * r * r, h, w])]
                }
            })
        ops.append(
            MILOp("one_hot", batch: .notSeparable, cost: .elementwise) { lowering in
                let indices = try lowering.tensor("indices")
                // The size and values may be computed at run time (read when the prediction is built).
                let depthParameter = try lowering.required(
                    lowering.runtimeNumber("one_hot_vector_size"), "one_hot_vector_size")
                let axis = try lowering.int("axis") ?? -1
                let onParameter = try lowering.runtimeNumber("on_value") ?? .constant(1)
                let offParameter = try lowering.runtimeNumber("off_value") ?? .constant(0)
                let isFloat = [.float16, .float32, .float64].contains(lowering.declaredType("on_value")?.dataType)
                return { args in
                    let depth = try LoweredFunction.computedCount(try depthParameter.value(args), "one_hot_vector_size")
                    let (on, off) = (try onParameter.value(args), try offParameter.value(args))
                    // indices (expanded at `axis`) == 0..<depth along that axis.
                    let i = args[indices].asInt32
                    let a = try i.axis(axis, op: "one_hot", insertion: true)
                    var rangeShape = [Int](repeating: 1, count: i.rank + 1)
                    rangeShape[a] = depth
                    let range = MLTensor(
                        shape: rangeShape, scalars: (0..<depth).map { Int32($0) }, scalarType: Int32.self)
                    let (onValue, offValue) =
                        isFloat
                        ? (MLTensor(Float(on)), MLTensor(Float(off))) : (MLTensor(Int32(on)), MLTensor(Int32(off)))
                    return [MLTensor.selecting(i.expandingShape(at: a) .== range, onValue, offValue)]
                }
            })
        ops.append(
            MILOp("range_1d", batch: .notSeparable, cost: .elementwise) { lowering in
                // Bounds may be computed at run time; they are then read when the prediction is built.
                let bounds = [
                    try lowering.required(lowering.runtimeNumber("start"), "start"),
                    try lowering.required(lowering.runtimeNumber("end"), "end"),
                    try lowering.required(lowering.runtimeNumber("step"), "step"),
                ]
                let isFloat = [.float16, .float32, .float64].contains(lowering.declaredType("start")?.dataType)
                @Sendable func range(_ start: Double, _ end: Double, _ step: Double) throws -> MLTensor {
                    let count = try LoweredFunction.rangeCount(start: start, end: end, step: step)
                    let values = (0..<count).map { start + Double($0) * step }
                    return isFloat
                        ? MLTensor(shape: [count], scalars: values.map { Float($0) }, scalarType: Float.self)
                        : MLTensor(shape: [count], scalars: values.map { Int32($0) }, scalarType: Int32.self)
                }
                if case .constant(let start) = bounds[0], case .constant(let end) = bounds[1],
                    case .constant(let step) = bounds[2]
                {
                    let tensor: MLTensor
                    do { tensor = try range(start, end, step) } catch let error as OperandError {
                        throw lowering.invalid(error.message)
                    }
                    return { _ in [tensor] }
                }
                return { args in [try range(bounds[0].value(args), bounds[1].value(args), bounds[2].value(args))] }
            })
        ops.append(
            MILOp("depth_to_space", batch: .leadingAxis, cost: .elementwise) { lowering in
                let x = try lowering.tensor("x")
                let b = try lowering.required(lowering.int("block_size"), "block_size")
                guard b >= 1 else { throw lowering.invalid("block_size must be positive") }
                return { args in
                    // DCR order: [N, b, b, C/b², H, W] → [N, C/b², H, b, W, b].
                    let v = args[x]
                    try require(v.rank == 4, "needs [N, C·\(b * b), H, W], got \(v.shape)")
                    let (n, c, h, w) = (v.shape[0], v.shape[1] / (b * b), v.shape[2], v.shape[3])
                    let moved = v.reshapedIfNeeded(to: [n, b, b, c, h, w]).transposed(permutation: [0, 3, 4, 1, 5, 2])
                    return [moved.reshapedIfNeeded(to: [n, c, h * b, w * b])]
                }
            })
        ops.append(
            MILOp("space_to_depth", batch: .leadingAxis, cost: .elementwise) { lowering in
                let x = try lowering.tensor("x")
                let b = try lowering.required(lowering.int("block_size"), "block_size")
                guard b >= 1 else { throw lowering.invalid("block_size must be positive") }
                return { args in
                    // The inverse of depth_to_space: [N, C, H/b, b, W/b, b] → [N, b, b, C, H/b, W/b].
                    let v = args[x]
                    try require(v.rank == 4, "needs [N, C, H·\(b), W·\(b)], got \(v.shape)")
                    let (n, c, h, w) = (v.shape[0], v.shape[1], v.shape[2] / b, v.shape[3] / b)
                    let moved = v.reshapedIfNeeded(to: [n, c, h, b, w, b]).transposed(permutation: [0, 3, 5, 1, 2, 4])
                    return [moved.reshapedIfNeeded(to: [n, c * b * b, h, w])]
                }
            })
        ops.append(
            MILOp("sliding_windows", batch: .notSeparable, cost: .elementwise) { lowering in
                let x = try lowering.tensor("x")
                let axis = try lowering.required(lowering.int("axis"), "axis")
                let size = try lowering.required(lowering.int("size"), "size")
                let step = try lowering.int("stride") ?? 1
                guard size >= 1, step >= 1 else { throw lowering.invalid("size and stride must be positive") }
                return { args in
                    // One gather with [windows, size] indices i·stride + j.
                    let v = args[x]
                    let a = try v.axis(axis, op: "sliding_windows")
                    try require(v.shape[a] >= size, "a window of \(size) does not fit axis \(a) of \(v.shape)")
                    let windows = (v.shape[a] - size) / step + 1
                    let indices = (0..<windows * size).map { Int32(($0 / size) * step + $0 % size) }
                    let table = MLTensor(shape: [windows, size], scalars: indices, scalarType: Int32.self)
                    return [v.gathering(atIndices: table, alongAxis: a)]
                }
            })
        ops.append(
            MILOp("shape", batch: .always(.shapeOf), cost: .elementwise) { lowering in
                let x = try lowering.tensor("x")
                return { args in
                    [MLTensor(shape: [args[x].rank], scalars: args[x].shape.map { Int32($0) }, scalarType: Int32.self)]
                }
            })
        ops.append(
            MILOp("fill_like", batch: .elementwise, cost: .elementwise) { lowering in
                let reference = try lowering.tensor("ref_tensor")
                let value = try lowering.double("value") ?? 0
                let isFloat = [.float16, .float32, .float64].contains(lowering.declaredType("value")?.dataType)
                return { args in
                    let scalar = MLTensor.scalarConstant(value, type: isFloat ? .float32 : .int32)
                    return [scalar.broadcast(to: args[reference].shape)]
                }
            })
        ops.append(
            MILOp("cumsum", batch: .from { l in .alongAxes([try l.int("axis") ?? 0]) }, cost: .elementwise) {
                lowering in
                let x = try lowering.tensor("x")
                let axis = try lowering.int("axis") ?? 0
                let exclusive = try lowering.bool("exclusive") ?? false
                let reverse = try lowering.bool("reverse") ?? false
                return { args in
                    let v = args[x].kernelType == .bool ? args[x].asInt32 : args[x]
                    return [v.cumulativeSum(alongAxis: axis, exclusive: exclusive, reverse: reverse)]
                }
            })
        return ops
    }()

    /// A MIL `reshape` target with `-1` (inferred) and `0` (copied from the input) resolved;
    /// the reshape's rule reports a target that is still negative or holds another count.
    static func resolvedShape(_ shape: [Int], of input: [Int]) throws -> [Int] {
        var resolved = shape
        // A 0 copies the input dimension it lines up with from the right (iOS 17's rule, which
        // is iOS 15's when the ranks match), or is 1 past the input's rank.
        for (i, size) in shape.enumerated() where size == 0 {
            let j = input.count - (shape.count - i)
            resolved[i] = j >= 0 ? input[j] : 1
        }
        if let i = resolved.firstIndex(of: -1) {
            let known = resolved.enumerated().filter { $0.offset != i }.map(\.element).reduce(1, *)
            try require(known > 0, "cannot reshape \(input) to \(shape)")
            resolved[i] = input.reduce(1, *) / known
        }
        return resolved
    }
}

extension MILOp {
    /// `pieces` (one shape) concatenated along `axis` by interleaving: element `i` of piece
    /// `k` goes to position `i · count + k` (MIL `concat(interleave: true)`, NeuralNetwork
    /// `concatND` with `interleave`). Stacks along a new axis after `axis`, then merges the two.
    static func interleavedConcat(_ pieces: [MLTensor], axis: Int) throws -> MLTensor {
        let first = pieces[0]
        let a = try first.axis(axis, op: "concat")
        for piece in pieces where piece.shape != first.shape {
            throw OperandError(
                "interleaved concatenation needs inputs of one shape, got \(first.shape) and \(piece.shape)")
        }
        var shape = first.shape
        shape[a] *= pieces.count
        return MLTensor(stacking: pieces, alongAxis: a + 1).reshapedIfNeeded(to: shape)
    }
}
