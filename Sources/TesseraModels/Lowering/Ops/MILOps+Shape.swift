import TesseraGraph
import TesseraKernels
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
                    [try args[x].reshaped(checked: try resolvedShape(try shape.values(args), of: args[x].shape))]
                }
            })
        ops.append(
            MILOp(
                "transpose", batch: .from { l in .transpose(perm: try l.required(l.ints("perm"), "perm")) },
                cost: .elementwise
            ) { lowering in
                let x = try lowering.tensor("x")
                let perm = try lowering.required(lowering.ints("perm"), "perm")
                return { args in [try args[x].permuted(checked: perm)] }
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
                    return [try args[x].reshaped(checked: shape)]
                }
            })
        ops.append(
            MILOp("expand_dims", batch: .reshape, cost: .elementwise) { lowering in
                let x = try lowering.tensor("x")
                let axes = try lowering.required(lowering.ints("axes"), "axes")
                return { args in
                    let v = args[x]
                    let outRank = v.rank + axes.count
                    let inserted = axes.map { $0 < 0 ? $0 + outRank : $0 }
                    try require(
                        inserted.allSatisfy { $0 >= 0 && $0 < outRank } && Set(inserted).count == inserted.count,
                        "axes \(axes) are invalid for rank \(v.rank)")
                    var shape: [Int] = []
                    var source = v.shape.makeIterator()
                    for axis in 0..<outRank { shape.append(inserted.contains(axis) ? 1 : source.next()!) }
                    return [try v.reshaped(checked: shape)]
                }
            })
        ops.append(
            MILOp("squeeze", batch: .reshape, cost: .elementwise) { lowering in
                let x = try lowering.tensor("x")
                let axes = try lowering.ints("axes")
                return { args in
                    let v = args[x]
                    let squeezed = try axes.map { try v.axes($0) } ?? v.shape.indices.filter { v.shape[$0] == 1 }
                    try require(squeezed.allSatisfy { v.shape[$0] == 1 }, "axes \(axes ?? []) are not all of size 1")
                    return [
                        try v.reshaped(checked: v.shape.indices.filter { !squeezed.contains($0) }.map { v.shape[$0] })
                    ]
                }
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
                    return [try v.reshaped(checked: [v.shape[..<a].reduce(1, *), v.shape[a...].reduce(1, *)])]
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
                    let pieces = values.map { args[$0] }
                    guard interleave, let first = pieces.first else { return [try .joined(pieces, axis: axis)] }
                    // Interleaved: stack along a new axis after `axis`, then merge the two.
                    let a = try first.axis(axis)
                    let stacked = try MLTensor.joined(
                        try pieces.map { p in
                            var shape = p.shape
                            shape.insert(1, at: a + 1)
                            return try p.reshaped(checked: shape)
                        }, axis: a + 1)
                    var shape = first.shape
                    shape[a] *= pieces.count
                    return [try stacked.reshaped(checked: shape)]
                }
            })
        ops.append(
            MILOp(
                "stack", batch: .from { l in .stack(axis: try l.required(l.int("axis"), "axis")) }, cost: .elementwise
            ) { lowering in
                let values = try lowering.tensors("values")
                let axis = try lowering.required(lowering.int("axis"), "axis")
                return { args in
                    let pieces = values.map { args[$0] }
                    let a = try pieces[0].axis(axis, insertion: true)
                    return [
                        try .joined(
                            try pieces.map { p in
                                var shape = p.shape
                                shape.insert(1, at: a)
                                return try p.reshaped(checked: shape)
                            }, axis: a)
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
                    let v = args[x]
                    let a = try v.axis(axis)
                    let size = v.shape[a]
                    var parts = sizes ?? []
                    if sizes == nil {
                        let n = count ?? outputs
                        try require(n > 0 && size % n == 0, "cannot split \(size) into \(n) equal parts")
                        parts = [Int](repeating: size / n, count: n)
                    }
                    try require(
                        parts.count == outputs && parts.allSatisfy { $0 >= 0 } && parts.reduce(0, +) == size,
                        "split sizes \(parts) do not divide \(size) into \(outputs) outputs")
                    var start = 0
                    return parts.map { part in
                        defer { start += part }
                        return v.narrowed(axis: a, start: start, count: part)
                    }
                }
            })
        ops.append(
            MILOp("tile", batch: .from { l in .tile(reps: try l.required(l.ints("reps"), "reps")) }, cost: .elementwise)
            { lowering in
                let x = try lowering.tensor("x")
                let reps = try lowering.required(lowering.ints("reps"), "reps")
                return { args in
                    var v = args[x]
                    try require(
                        reps.count >= v.rank && reps.allSatisfy { $0 >= 0 }, "reps \(reps) do not fit \(v.shape)")
                    if reps.count > v.rank {
                        v = try v.reshaped(checked: [Int](repeating: 1, count: reps.count - v.rank) + v.shape)
                    }
                    return [reps.allSatisfy { $0 == 1 } ? v : MLTensor(.tile(reps), [v])]
                }
            })
        ops.append(
            MILOp("pad", batch: .from { l in .pad(try l.required(l.ints("pad"), "pad")) }, cost: .elementwise) {
                lowering in
                let x = try lowering.tensor("x")
                let pad = try lowering.required(lowering.ints("pad"), "pad")
                let mode = try lowering.string("mode") ?? "constant"
                let value = try lowering.double("constant_val") ?? 0
                let padMode: GraphPadMode
                switch mode {
                case "constant": padMode = .constant(value)
                case "reflect": padMode = .reflect
                case "replicate": padMode = .edge
                case "symmetric": padMode = .symmetric
                default: throw lowering.invalid("unknown pad mode '\(mode)'")
                }
                guard pad.count % 2 == 0, pad.allSatisfy({ $0 >= 0 }) else {
                    throw lowering.invalid("pad \(pad) must be non-negative (before, after) pairs")
                }
                return { args in
                    let v = args[x]
                    let padded = pad.count / 2
                    try require(padded <= v.rank, "pad \(pad) covers more axes than \(v.shape) has")
                    var before = [Int](repeating: 0, count: v.rank)
                    var after = before
                    for i in 0..<padded {
                        let axis = v.rank - padded + i
                        (before[axis], after[axis]) = (pad[2 * i], pad[2 * i + 1])
                        if mode == "reflect" {
                            try require(
                                before[axis] < v.shape[axis] && after[axis] < v.shape[axis],
                                "reflect padding must be smaller than the axis")
                        } else if mode != "constant" {
                            try require(
                                v.shape[axis] > 0 || (before[axis] == 0 && after[axis] == 0), "cannot pad an empty axis"
                            )
                        }
                    }
                    return [MLTensor(.pad(before: before, after: after, mode: padMode), [v])]
                }
            })
        ops.append(
            MILOp("reverse", batch: .from { l in .alongAxes(try l.ints("axes")) }, cost: .elementwise) { lowering in
                let x = try lowering.tensor("x")
                let axes = try lowering.ints("axes")
                return { args in
                    let v = args[x]
                    let reversed = try v.axes(axes ?? Array(0..<v.rank))
                    var starts = [Int](repeating: 0, count: v.rank)
                    var steps = [Int](repeating: 1, count: v.rank)
                    for axis in reversed where v.shape[axis] > 0 {
                        starts[axis] = v.shape[axis] - 1
                        steps[axis] = -1
                    }
                    return [v.sliced(starts: starts, steps: steps, counts: v.shape)]
                }
            })
        ops.append(
            MILOp("fill", batch: .notSeparable, cost: .elementwise) { lowering in
                let shape = try lowering.required(lowering.ints("shape"), "shape")
                let value = try lowering.double("value") ?? 0
                guard shape.allSatisfy({ $0 >= 0 }) else { throw lowering.invalid("negative size in shape \(shape)") }
                return { _ in [MLTensor(.broadcast(shape), [MLTensor.scalarConstant(value, type: .float32)])] }
            })
        ops.append(
            MILOp("band_part", batch: .always(.alongAxes([-2, -1])), cost: .elementwise) { lowering in
                let x = try lowering.tensor("x")
                let lower = try lowering.int("lower") ?? -1
                let upper = try lowering.int("upper") ?? -1
                return { args in
                    let v = args[x]
                    try require(v.rank >= 2, "needs rank ≥ 2, got \(v.shape)")
                    let (rows, columns) = (v.shape[v.rank - 2], v.shape[v.rank - 1])
                    // Keep (i, j) where (lower < 0 || i - j <= lower) && (upper < 0 || j - i <= upper).
                    let mask = (0..<rows * columns).map { k -> Bool in
                        let (i, j) = (k / columns, k % columns)
                        return (lower < 0 || i - j <= lower) && (upper < 0 || j - i <= upper)
                    }
                    let maskTensor = MLTensor(shape: [rows, columns], scalars: mask, scalarType: Bool.self)
                    return [try .selecting(maskTensor, v, v.scalar(0))]
                }
            })
        ops.append(
            MILOp("pixel_shuffle", batch: .leadingAxis, cost: .elementwise) { lowering in
                let x = try lowering.tensor("x")
                let r = try lowering.required(lowering.int("upscale_factor"), "upscale_factor")
                guard r >= 1 else { throw lowering.invalid("upscale_factor must be positive") }
                return { args in
                    // [N, C·r², H, W] → [N, C, r, r, H, W] → [N, C, H, r, W, r] → [N, C, H·r, W·r]
                    let v = args[x]
                    try require(v.rank == 4 && v.shape[1] % (r * r) == 0, "needs [N, C·\(r * r), H, W], got \(v.shape)")
                    let (n, c, h, w) = (v.shape[0], v.shape[1] / (r * r), v.shape[2], v.shape[3])
                    let split = try v.reshaped(checked: [n, c, r, r, h, w]).permuted(checked: [0, 1, 4, 2, 5, 3])
                    return [try split.reshaped(checked: [n, c, h * r, w * r])]
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
                    try require(
                        v.rank == 4 && v.shape[2] % r == 0 && v.shape[3] % r == 0,
                        "needs [N, C, H·\(r), W·\(r)], got \(v.shape)")
                    let (n, c, h, w) = (v.shape[0], v.shape[1], v.shape[2] / r, v.shape[3] / r)
                    let split = try v.reshaped(checked: [n, c, h, r, w, r]).permuted(checked: [0, 1, 3, 5, 2, 4])
                    return [try split.reshaped(checked: [n, c * r * r, h, w])]
                }
            })
        ops.append(
            MILOp("one_hot", batch: .notSeparable, cost: .elementwise) { lowering in
                let indices = try lowering.tensor("indices")
                let depth = try lowering.required(lowering.int("one_hot_vector_size"), "one_hot_vector_size")
                let axis = try lowering.int("axis") ?? -1
                let on = try lowering.double("on_value") ?? 1
                let off = try lowering.double("off_value") ?? 0
                let isFloat = [.float16, .float32, .float64].contains(lowering.declaredType("on_value")?.dataType)
                guard depth >= 0 else { throw lowering.invalid("one_hot_vector_size must be non-negative") }
                return { args in
                    // indices (expanded at `axis`) == 0..<depth along that axis.
                    let i = args[indices].converted(to: .int32)
                    let a = try i.axis(axis, insertion: true)
                    var expanded = i.shape
                    expanded.insert(1, at: a)
                    var rangeShape = [Int](repeating: 1, count: i.rank + 1)
                    rangeShape[a] = depth
                    let range = MLTensor(
                        shape: rangeShape, scalars: (0..<depth).map { Int32($0) }, scalarType: Int32.self)
                    let hit = try MLTensor.elementwise(.equal, try i.reshaped(checked: expanded), range)
                    let type: KernelScalarType = isFloat ? .float32 : .int32
                    return [
                        try .selecting(
                            hit, MLTensor.scalarConstant(on, type: type), MLTensor.scalarConstant(off, type: type))
                    ]
                }
            })
        ops.append(
            MILOp("range_1d", batch: .notSeparable, cost: .elementwise) { lowering in
                let start = try lowering.required(lowering.double("start"), "start")
                let end = try lowering.required(lowering.double("end"), "end")
                let step = try lowering.required(lowering.double("step"), "step")
                let isFloat = [.float16, .float32, .float64].contains(lowering.declaredType("start")?.dataType)
                guard step != 0 else { throw lowering.invalid("step must not be 0") }
                let count = Swift.max(0, Int(((end - start) / step).rounded(.up)))
                guard count < 1 << 28 else { throw lowering.invalid("the range has \(count) elements") }
                let values = (0..<count).map { start + Double($0) * step }
                let tensor =
                    isFloat
                    ? MLTensor(shape: [count], scalars: values.map { Float($0) }, scalarType: Float.self)
                    : MLTensor(shape: [count], scalars: values.map { Int32($0) }, scalarType: Int32.self)
                return { _ in [tensor] }
            })
        ops.append(
            MILOp("depth_to_space", batch: .leadingAxis, cost: .elementwise) { lowering in
                let x = try lowering.tensor("x")
                let b = try lowering.required(lowering.int("block_size"), "block_size")
                guard b >= 1 else { throw lowering.invalid("block_size must be positive") }
                return { args in
                    // DCR order: [N, b, b, C/b², H, W] → [N, C/b², H, b, W, b].
                    let v = args[x]
                    try require(v.rank == 4 && v.shape[1] % (b * b) == 0, "needs [N, C·\(b * b), H, W], got \(v.shape)")
                    let (n, c, h, w) = (v.shape[0], v.shape[1] / (b * b), v.shape[2], v.shape[3])
                    let moved = try v.reshaped(checked: [n, b, b, c, h, w]).permuted(checked: [0, 3, 4, 1, 5, 2])
                    return [try moved.reshaped(checked: [n, c, h * b, w * b])]
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
                    try require(
                        v.rank == 4 && v.shape[2] % b == 0 && v.shape[3] % b == 0,
                        "needs [N, C, H·\(b), W·\(b)], got \(v.shape)")
                    let (n, c, h, w) = (v.shape[0], v.shape[1], v.shape[2] / b, v.shape[3] / b)
                    let moved = try v.reshaped(checked: [n, c, h, b, w, b]).permuted(checked: [0, 3, 5, 1, 2, 4])
                    return [try moved.reshaped(checked: [n, c * b * b, h, w])]
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
                    let a = try v.axis(axis)
                    try require(v.shape[a] >= size, "a window of \(size) does not fit axis \(a) of \(v.shape)")
                    let windows = (v.shape[a] - size) / step + 1
                    let indices = (0..<windows * size).map { Int32(($0 / size) * step + $0 % size) }
                    return [
                        MLTensor(
                            .gather(axis: a),
                            [v, MLTensor(shape: [windows, size], scalars: indices, scalarType: Int32.self)])
                    ]
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
                    return [MLTensor(.broadcast(args[reference].shape), [scalar])]
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
                    var v = args[x]
                    if v.kernelType == .bool { v = v.converted(to: .int32) }
                    return [
                        MLTensor(
                            .scan(product: false, axis: try v.axis(axis), exclusive: exclusive, reverse: reverse), [v])
                    ]
                }
            })
        return ops
    }()

    /// A MIL `reshape` target with `-1` (inferred) and `0` (copied from the input) resolved.
    static func resolvedShape(_ shape: [Int], of input: [Int]) throws -> [Int] {
        var resolved = shape
        // A 0 copies the input dimension it lines up with from the right (iOS 17's rule, which
        // is iOS 15's when the ranks match), or is 1 past the input's rank.
        for (i, size) in shape.enumerated() where size == 0 {
            let j = input.count - (shape.count - i)
            resolved[i] = j >= 0 ? input[j] : 1
        }
        let inferred = resolved.indices.filter { resolved[$0] == -1 }
        try require(inferred.count <= 1, "shape \(shape) has more than one -1")
        try require(resolved.allSatisfy { $0 >= -1 }, "shape \(shape) has a negative size")
        if let i = inferred.first {
            let known = resolved.enumerated().filter { $0.offset != i }.map(\.element).reduce(1, *)
            let total = input.reduce(1, *)
            try require(known > 0 && total % known == 0, "cannot reshape \(input) to \(shape)")
            resolved[i] = total / known
        }
        return resolved
    }
}
