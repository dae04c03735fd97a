import TesseraGraph
import TesseraKernels
import TesseraTensor

/// Slicing, gathering, sorting and scattering.
extension MILOp {
    static let indexingOps: [MILOp] = [
        MILOp(
            "slice_by_index",
            batch: .from { l in .slice(strides: try l.ints("stride"), squeeze: try l.bools("squeeze_mask")) },
            cost: .dataMovement
        ) { lowering in
            let x = try lowering.tensor("x")
            let beginParameter = try lowering.required(lowering.runtimeInts("begin"), "begin")
            let endParameter = try lowering.required(lowering.runtimeInts("end"), "end")
            let stride = try lowering.ints("stride")
            let beginMask = try lowering.bools("begin_mask")
            let endMask = try lowering.bools("end_mask")
            let squeezeMask = try lowering.bools("squeeze_mask")
            return { args in
                let v = args[x]
                let rank = v.rank
                let (begin, end) = (try beginParameter.values(args), try endParameter.values(args))
                for list in [begin, end, stride ?? begin] {
                    try require(list.count == rank, "begin/end/stride need \(rank) values")
                }
                for mask in [beginMask, endMask, squeezeMask] {
                    try require((mask?.count ?? rank) == rank, "masks need \(rank) values")
                }
                var starts: [Int] = []
                var steps: [Int] = []
                var counts: [Int] = []
                var kept: [Int] = []
                for axis in 0..<rank {
                    let size = v.shape[axis]
                    let step = stride?[axis] ?? 1
                    try require(step != 0, "stride 0 on axis \(axis)")
                    if squeezeMask?[axis] == true {
                        var index = begin[axis]
                        if index < 0 { index += size }
                        try require(index >= 0 && index < size, "index \(begin[axis]) is out of range for size \(size)")
                        starts.append(index)
                        steps.append(1)
                        counts.append(1)
                        continue
                    }
                    let range = pythonSlice(
                        size: size, start: beginMask?[axis] == true ? nil : begin[axis],
                        stop: endMask?[axis] == true ? nil : end[axis], step: step)
                    starts.append(range.count > 0 ? range.start : 0)
                    steps.append(step)
                    counts.append(range.count)
                    kept.append(axis)
                }
                let sliced = v.sliced(starts: starts, steps: steps, counts: counts)
                return [try sliced.reshaped(checked: kept.map { counts[$0] })]
            }
        },
        MILOp("slice_by_size", batch: .always(.slice(strides: nil, squeeze: nil)), cost: .dataMovement) { lowering in
            let x = try lowering.tensor("x")
            let beginParameter = try lowering.required(lowering.runtimeInts("begin"), "begin")
            let sizeParameter = try lowering.required(lowering.runtimeInts("size"), "size")
            return { args in
                let v = args[x]
                let (begin, size) = (try beginParameter.values(args), try sizeParameter.values(args))
                try require(begin.count == v.rank && size.count == v.rank, "begin/size need \(v.rank) values")
                var starts: [Int] = []
                var counts: [Int] = []
                for axis in 0..<v.rank {
                    let start = begin[axis] < 0 ? begin[axis] + v.shape[axis] : begin[axis]
                    let count = size[axis] == -1 ? v.shape[axis] - start : size[axis]
                    try require(
                        start >= 0 && count >= 0 && start + count <= v.shape[axis],
                        "begin \(begin) and size \(size) leave the bounds of \(v.shape)")
                    starts.append(count > 0 ? start : 0)
                    counts.append(count)
                }
                return [v.sliced(starts: starts, steps: [Int](repeating: 1, count: v.rank), counts: counts)]
            }
        },
        MILOp(
            "gather",
            batch: .from { l in
                (try l.int("batch_dims") ?? 0) == 0 ? .gather(axis: try l.int("axis") ?? 0) : .notSeparable
            }, cost: .dataMovement
        ) { lowering in
            let x = try lowering.tensor("x")
            let indices = try lowering.tensor("indices")
            let axis = try lowering.int("axis") ?? 0
            let batchDims = try lowering.int("batch_dims") ?? 0
            guard batchDims >= 0 else { throw lowering.invalid("batch_dims must be non-negative") }
            return { args in
                let v = args[x]
                let a = try v.axis(axis)
                let index = try clampedIndices(args[indices], size: v.shape[a])
                if batchDims == 0 { return [MLTensor(.gather(axis: a), [v, index])] }
                return [try batchedGather(v, index, axis: a, batchDims: batchDims)]
            }
        },
        MILOp("gather_along_axis", batch: .notSeparable, cost: .dataMovement) { lowering in
            let x = try lowering.tensor("x")
            let indices = try lowering.tensor("indices")
            let axis = try lowering.int("axis") ?? 0
            return { args in [try gatherAlongAxis(args[x], args[indices], axis: axis)] }
        },
        MILOp("reverse_sequence", batch: .notSeparable, cost: .elementwise) { lowering in
            let x = try lowering.tensor("x")
            let lengths = try lowering.tensor("lengths")
            let seqAxis = try lowering.int("seq_axis") ?? 0
            let batchAxis = try lowering.int("batch_axis") ?? 0
            return { args in
                // Along seq_axis, position t of batch b reads len[b] - 1 - t when t < len[b], else t.
                let v = args[x]
                let (s, b) = (try v.axis(seqAxis), try v.axis(batchAxis))
                let length = args[lengths].converted(to: .int32)
                try require(s != b && length.scalarCount == v.shape[b], "lengths \(length.shape) do not fit \(v.shape)")
                var batchShape = [Int](repeating: 1, count: v.rank)
                batchShape[b] = v.shape[b]
                var timeShape = [Int](repeating: 1, count: v.rank)
                timeShape[s] = v.shape[s]
                let len = try length.reshaped(checked: batchShape)
                let t = MLTensor(shape: timeShape, scalars: (0..<v.shape[s]).map { Int32($0) }, scalarType: Int32.self)
                let reversed = try MLTensor.elementwise(.sub, try .elementwise(.sub, len, len.scalar(1)), t)
                let source = try MLTensor.selecting(try .elementwise(.less, t, len), reversed, t)
                return [try gatherAlongAxis(v, MLTensor(.broadcast(v.shape), [source]), axis: s)]
            }
        },
        MILOp("gather_nd", batch: .notSeparable, cost: .dataMovement) { lowering in
            let x = try lowering.tensor("x")
            let indices = try lowering.tensor("indices")
            let batchDims = try lowering.int("batch_dims") ?? 0
            guard batchDims >= 0 else { throw lowering.invalid("batch_dims must be non-negative") }
            return { args in [try gatherND(args[x], args[indices], batchDims: batchDims)] }
        },
        MILOp("topk", batch: .notSeparable, cost: .elementwise) { lowering in
            let x = try lowering.tensor("x")
            let k = try lowering.int("k") ?? 1
            let axis = try lowering.int("axis") ?? -1
            let ascending = try lowering.bool("ascending") ?? false
            let outputs = lowering.operation.outputs.count
            return { args in
                // Indices of the k best along the axis (sorted, stable), then their values.
                let v = args[x]
                let a = try v.axis(axis)
                try require(k >= 0 && k <= v.shape[a], "k = \(k) does not fit axis \(a) of \(v.shape)")
                let indices = MLTensor(.argsort(axis: a, descending: !ascending, count: k), [v])
                let values = MLTensor(.gatherElements(axis: a), [v, indices])
                return outputs == 1 ? [values] : [values, indices]
            }
        },
        MILOp("argsort", batch: .notSeparable, cost: .elementwise) { lowering in
            let x = try lowering.tensor("x")
            let axis = try lowering.int("axis") ?? -1
            let ascending = try lowering.bool("ascending") ?? false
            return { args in
                let v = args[x]
                let a = try v.axis(axis)
                return [MLTensor(.argsort(axis: a, descending: !ascending, count: v.shape[a]), [v])]
            }
        },
        MILOp("scatter_along_axis", batch: .notSeparable, cost: .elementwise) { lowering in
            let data = try lowering.tensor("data")
            let indices = try lowering.tensor("indices")
            let updates = try lowering.tensor("updates")
            let axis = try lowering.int("axis") ?? 0
            let mode = try lowering.string("mode") ?? "add"
            guard mode == "update" else { throw lowering.unsupported("scatter_along_axis with mode '\(mode)'") }
            return { args in
                // Replacement at data[p with p[axis] = indices[p]] on the graph's scatter op.
                let (d, i) = (args[data], args[indices])
                let a = try d.axis(axis)
                let u = args[updates].converted(to: d.kernelType)
                try require(
                    i.rank == d.rank && u.shape == i.shape
                        && (0..<d.rank).allSatisfy { $0 == a || i.shape[$0] <= d.shape[$0] },
                    "indices \(i.shape) and updates \(u.shape) do not fit data \(d.shape) along axis \(a)")
                return [MLTensor(.scatter(axis: a), [d, try clampedIndices(i, size: d.shape[a]), u])]
            }
        },
    ]

    /// `gather` with leading batch axes shared by `x` and `indices`:
    /// `out[b, p, i, r] = x[b, p, indices[b, i], r]` for `x` `[B…, P…, A, R…]` and `indices`
    /// `[B…, I…]`. The batch axes are folded into the gathered axis, so one plain gather does it.
    static func batchedGather(_ x: MLTensor, _ indices: MLTensor, axis: Int, batchDims: Int) throws -> MLTensor {
        try require(
            batchDims <= axis && batchDims <= indices.rank
                && Array(x.shape.prefix(batchDims)) == Array(indices.shape.prefix(batchDims)),
            "batch_dims \(batchDims) does not fit x \(x.shape), indices \(indices.shape) and axis \(axis)")
        let batch = Array(x.shape[..<batchDims])
        let middle = Array(x.shape[batchDims..<axis])
        let rest = Array(x.shape[(axis + 1)...])
        let points = Array(indices.shape[batchDims...])
        let (b, p, size, r, n) = (
            batch.reduce(1, *), middle.reduce(1, *), x.shape[axis], rest.reduce(1, *), points.reduce(1, *)
        )
        // [B, P, A, R] → [B, A, P, R] → [B·A, P, R]; indices [B, I] → b·A + index.
        let folded = try x.reshaped(checked: [b, p, size, r]).permuted(checked: [0, 2, 1, 3]).reshaped(checked: [
            b * size, p, r,
        ])
        let offsets = MLTensor(shape: [b, 1], scalars: (0..<b).map { Int32($0 * size) }, scalarType: Int32.self)
        let linear = MLTensor(.binary(.add), try indices.reshaped(checked: [b, n]), offsets)
        let gathered = MLTensor(.gather(axis: 0), [folded, linear])  // [B, I, P, R]
        return try gathered.permuted(checked: [0, 2, 1, 3]).reshaped(checked: batch + middle + points + rest)
    }

    /// `out[b, p] = x[b, indices[b, p, 0], …, indices[b, p, K-1], …]` for `x` `[B…, D…, R…]` and
    /// `indices` `[B…, P…, K]`: one gather from `x` with its batch and first `K` indexed axes
    /// merged, at `b · ΠD + Σ index_k · stride_k`.
    static func gatherND(_ x: MLTensor, _ indices: MLTensor, batchDims: Int) throws -> MLTensor {
        try require(indices.rank >= batchDims + 1, "indices \(indices.shape) need rank > batch_dims \(batchDims)")
        let k = indices.shape[indices.rank - 1]
        try require(
            k >= 1 && batchDims + k <= x.rank
                && Array(x.shape.prefix(batchDims)) == Array(indices.shape.prefix(batchDims)),
            "indices \(indices.shape) do not fit x \(x.shape) with batch_dims \(batchDims)")
        let batch = Array(x.shape[..<batchDims])
        let indexed = Array(x.shape[batchDims..<(batchDims + k)])
        let rest = Array(x.shape[(batchDims + k)...])
        let points = Array(indices.shape[batchDims..<(indices.rank - 1)])
        let (b, d, p) = (batch.reduce(1, *), indexed.reduce(1, *), points.reduce(1, *))
        try require(b * d < Int(Int32.max), "x \(x.shape) is too large to index with int32")
        let flat = try indices.reshaped(checked: [b, p, k])
        var linear = MLTensor(shape: [b, 1], scalars: (0..<b).map { Int32($0 * d) }, scalarType: Int32.self)
        var step = 1
        for axis in (0..<k).reversed() {
            let component = try clampedIndices(
                try flat.narrowed(axis: 2, start: axis, count: 1).reshaped(checked: [b, p]), size: indexed[axis])
            let term = step == 1 ? component : MLTensor(.binary(.mul), component, component.scalar(Double(step)))
            linear = MLTensor(.binary(.add), linear, term)
            step *= indexed[axis]
        }
        let merged = try x.reshaped(checked: [b * d] + rest)
        let gathered = MLTensor(.gather(axis: 0), [merged, linear])  // [B, P, R…]
        return try gathered.reshaped(checked: batch + points + rest)
    }

    /// `out[p] = x[p with p[axis] = indices[p]]`: one gather from the flattened input at
    /// linear positions `offset(p without axis) + index · stride(axis)`.
    static func gatherAlongAxis(_ v: MLTensor, _ i: MLTensor, axis: Int) throws -> MLTensor {
        let a = try v.axis(axis)
        try require(i.rank == v.rank, "indices \(i.shape) must have the rank of x \(v.shape)")
        for d in 0..<v.rank where d != a {
            try require(i.shape[d] == v.shape[d], "indices \(i.shape) and x \(v.shape) differ off axis \(a)")
        }
        try require(v.scalarCount < Int(Int32.max), "x \(v.shape) is too large to index with int32")
        var strides = [Int](repeating: 1, count: v.rank)
        for d in stride(from: v.rank - 2, through: 0, by: -1) { strides[d] = strides[d + 1] * v.shape[d + 1] }
        let count = i.scalarCount
        var offsets = [Int32](repeating: 0, count: count)
        if count > 0 {
            var position = [Int](repeating: 0, count: v.rank)
            for k in 0..<count {
                var offset = 0
                for d in 0..<v.rank where d != a { offset += position[d] * strides[d] }
                offsets[k] = Int32(offset)
                var d = v.rank - 1
                while d >= 0 {
                    position[d] += 1
                    if position[d] < i.shape[d] { break }
                    position[d] = 0
                    d -= 1
                }
            }
        }
        let index = try clampedIndices(i, size: v.shape[a])
        let linear = MLTensor(
            .binary(.add), MLTensor(.binary(.mul), index, index.scalar(Double(strides[a]))),
            MLTensor(shape: i.shape, scalars: offsets, scalarType: Int32.self))
        return MLTensor(.gather(axis: 0), [try v.reshaped(checked: [v.scalarCount]), linear])
    }

    /// Python's `slice(start, stop, step).indices(size)`: the first index and the count.
    static func pythonSlice(size: Int, start: Int?, stop: Int?, step: Int) -> (start: Int, count: Int) {
        func clamp(_ value: Int?, _ defaultValue: Int) -> Int {
            guard var value else { return defaultValue }
            if value < 0 { value += size }
            if step > 0 { return Swift.min(Swift.max(value, 0), size) }
            return Swift.min(Swift.max(value, -1), size - 1)
        }
        let first = clamp(start, step > 0 ? 0 : size - 1)
        let last = clamp(stop, step > 0 ? size : -1)
        let count =
            step > 0 ? Swift.max(0, (last - first + step - 1) / step) : Swift.max(0, (first - last - step - 1) / -step)
        return (first, count)
    }

    /// Gather indices as int32, negative ones counted from the end, and out-of-range ones
    /// clamped to the axis (Core ML leaves them undefined; Tessera must not read outside).
    static func clampedIndices(_ indices: MLTensor, size: Int) throws -> MLTensor {
        try require(size > 0 || indices.scalarCount == 0, "cannot gather from an empty axis")
        var i = indices.kernelType.isFloatingPoint ? indices.elementwise(.floor) : indices
        i = i.converted(to: .int32)
        let wrapped = try MLTensor.selecting(
            try .elementwise(.less, i, i.scalar(0)), try .elementwise(.add, i, i.scalar(Double(size))), i)
        return try .elementwise(
            .min, try .elementwise(.max, wrapped, i.scalar(0)), i.scalar(Double(Swift.max(size - 1, 0))))
    }
}
