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
            let parameters = try SliceByIndexParameters(&lowering)
            return { args in
                let v = args[x]
                // The slice's rule reports a squeezed index outside its axis.
                let selection = try parameters.selection(of: v.shape, args)
                let sliced = v.sliced(
                    starts: selection.map(\.start), steps: selection.map(\.step), counts: selection.map(\.count))
                return [sliced.reshapedIfNeeded(to: selection.filter { !$0.squeezed }.map(\.count))]
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
                let a = try v.axis(axis, op: "gather")
                let index = try clampedIndices(args[indices], size: v.shape[a])
                if batchDims == 0 { return [v.gathering(atIndices: index, alongAxis: a)] }
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
                let (s, b) = (
                    try v.axis(seqAxis, op: "reverse_sequence"), try v.axis(batchAxis, op: "reverse_sequence")
                )
                let length = args[lengths].asInt32
                try require(s != b && length.scalarCount == v.shape[b], "lengths \(length.shape) do not fit \(v.shape)")
                var batchShape = [Int](repeating: 1, count: v.rank)
                batchShape[b] = v.shape[b]
                var timeShape = [Int](repeating: 1, count: v.rank)
                timeShape[s] = v.shape[s]
                let len = length.reshapedIfNeeded(to: batchShape)
                let t = MLTensor(shape: timeShape, scalars: (0..<v.shape[s]).map { Int32($0) }, scalarType: Int32.self)
                let source = MLTensor.selecting(t .< len, len - 1 - t, t)
                return [try gatherAlongAxis(v, source.broadcast(to: v.shape), axis: s)]
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
                let indices = v.argsort(alongAxis: axis, descendingOrder: !ascending, count: k)
                let values = v.gathering(elementsAt: indices, alongAxis: axis)
                return outputs == 1 ? [values] : [values, indices]
            }
        },
        MILOp("argsort", batch: .notSeparable, cost: .elementwise) { lowering in
            let x = try lowering.tensor("x")
            let axis = try lowering.int("axis") ?? -1
            let ascending = try lowering.bool("ascending") ?? false
            return { args in
                [args[x].argsort(alongAxis: axis, descendingOrder: !ascending)]
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
                let d = args[data]
                let a = try d.axis(axis, op: "scatter_along_axis")
                let index = try clampedIndices(args[indices], size: d.shape[a])
                return [d.replacing(with: args[updates].converted(to: d.kernelType), atIndices: index, alongAxis: a)]
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
        let folded = x.reshapedIfNeeded(to: [b, p, size, r]).transposed(permutation: [0, 2, 1, 3]).reshapedIfNeeded(
            to: [
                b * size, p, r,
            ])
        let offsets = MLTensor(shape: [b, 1], scalars: (0..<b).map { Int32($0 * size) }, scalarType: Int32.self)
        // [B, I, P, R]
        let gathered = folded.gathering(atIndices: indices.reshapedIfNeeded(to: [b, n]) + offsets, alongAxis: 0)
        return gathered.transposed(permutation: [0, 2, 1, 3]).reshapedIfNeeded(to: batch + middle + points + rest)
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
        let flat = indices.reshapedIfNeeded(to: [b, p, k])
        var linear = MLTensor(shape: [b, 1], scalars: (0..<b).map { Int32($0 * d) }, scalarType: Int32.self)
        var step = 1
        for axis in (0..<k).reversed() {
            let component = try clampedIndices(
                flat.narrowed(alongAxis: 2, start: axis, count: 1).reshapedIfNeeded(to: [b, p]), size: indexed[axis])
            linear = linear + (step == 1 ? component : component * Int32(step))
            step *= indexed[axis]
        }
        let merged = x.reshapedIfNeeded(to: [b * d] + rest)
        let gathered = merged.gathering(atIndices: linear, alongAxis: 0)  // [B, P, R…]
        return gathered.reshapedIfNeeded(to: batch + points + rest)
    }

    /// `out[p] = x[p with p[axis] = indices[p]]` (`take_along_axis`), indices clamped to the
    /// axis; the gather's rule reports indices that do not fit `x`.
    static func gatherAlongAxis(_ v: MLTensor, _ i: MLTensor, axis: Int) throws -> MLTensor {
        let a = try v.axis(axis, op: "gather_along_axis")
        return v.gathering(elementsAt: try clampedIndices(i, size: v.shape[a]), alongAxis: a)
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
        let i = (indices.kernelType.isFloatingPoint ? indices.floor() : indices).asInt32
        let wrapped = MLTensor.selecting(i .< Int32(0), i + Int32(size), i)
        return pointwiseMin(pointwiseMax(wrapped, i.scalar(0)), i.scalar(Double(Swift.max(size - 1, 0))))
    }
}
