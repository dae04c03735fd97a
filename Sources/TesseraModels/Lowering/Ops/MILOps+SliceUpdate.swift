import TesseraTensor

/// `slice_update` (iOS 18): `x` with the slice `x[begin:end:stride, …]` replaced by `update`,
/// the slice chosen as `slice_by_index` chooses it (the same masks; a squeezed axis takes the
/// single index `begin`). `update` holds the slice's elements in its row-major order, in any
/// shape with that many elements (MIL requires the slice's shape). `begin` and `end` may be
/// computed at run time (read when the prediction is built, as a slice bound is).
extension MILOp {
    static let sliceUpdateOps: [MILOp] = [
        // The slice addresses the whole (batched) tensor: batches run as a loop.
        MILOp("slice_update", batch: .notSeparable, cost: .dataMovement) { lowering in
            let x = try lowering.tensor("x")
            let update = try lowering.tensor("update")
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
                    try require(list.count == rank, "begin/end/stride need \(rank) values for x \(v.shape)")
                }
                for mask in [beginMask, endMask, squeezeMask] {
                    try require((mask?.count ?? rank) == rank, "masks need \(rank) values for x \(v.shape)")
                }
                // The indices the slice takes along each axis.
                var chosen: [[Int]] = []
                for axis in 0..<rank {
                    let size = v.shape[axis]
                    if squeezeMask?[axis] == true {
                        let index = begin[axis] < 0 ? begin[axis] + size : begin[axis]
                        try require(
                            (0..<size).contains(index), "index \(begin[axis]) is outside axis \(axis) of \(v.shape)")
                        chosen.append([index])
                        continue
                    }
                    let step = stride?[axis] ?? 1
                    try require(step != 0, "stride 0 on axis \(axis)")
                    let range = pythonSlice(
                        size: size, start: beginMask?[axis] == true ? nil : begin[axis],
                        stop: endMask?[axis] == true ? nil : end[axis], step: step)
                    chosen.append((0..<range.count).map { range.start + $0 * step })
                }
                let positions = flatPositions(chosen, shape: v.shape)
                let u = args[update]
                try require(
                    u.scalarCount == positions.count,
                    "update \(u.shape) has \(u.scalarCount) elements; the slice of x \(v.shape) has \(positions.count)")
                if positions.isEmpty { return [v] }
                let (data, values) = MLTensor.promoted(v, u)
                let index = MLTensor(
                    shape: [1, positions.count, 1], scalars: positions.map { Int32($0) }, scalarType: Int32.self)
                let replaced = data.reshaped(to: [1, v.scalarCount, 1])
                    .replacing(with: values.reshaped(to: [1, positions.count, 1]), atIndices: index, alongAxis: 1)
                return [replaced.reshaped(to: v.shape)]
            }
        }
    ]

    /// The row-major offsets in a tensor of `shape` of every combination of the per-axis
    /// `indices`, in row-major order of the combinations.
    static func flatPositions(_ indices: [[Int]], shape: [Int]) -> [Int] {
        var positions = [0]
        for (axis, chosen) in indices.enumerated() {
            let size = shape[axis]
            var next: [Int] = []
            next.reserveCapacity(positions.count * chosen.count)
            for position in positions {
                for index in chosen { next.append(position * size + index) }
            }
            positions = next
        }
        return positions
    }
}
