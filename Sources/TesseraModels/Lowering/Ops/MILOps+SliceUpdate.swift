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
            let parameters = try SliceByIndexParameters(&lowering)
            return { args in
                let v = args[x]
                // The indices the slice takes along each axis.
                let chosen = try parameters.selection(of: v.shape, args).enumerated().map { axis, taken in
                    if taken.squeezed {
                        try require(
                            (0..<v.shape[axis]).contains(taken.start),
                            "index \(taken.start) is outside axis \(axis) of \(v.shape)")
                    }
                    return (0..<taken.count).map { taken.start + $0 * taken.step }
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
