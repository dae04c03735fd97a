import TesseraTensor

/// `scatter`, `scatterND`, `scatterAlongAxis` and `gatherND`.
///
/// Indices arrive as Float32 blobs (every NeuralNetwork blob is) and are truncated to
/// integers; negative ones count from the end. The three scatters become rows of a
/// `[outer, rows, inner]` view of the container that ``MILOp/scatterRows(_:rows:updates:mode:)``
/// combines the updates into, in index order, with the layer's `ScatterMode` (`SCATTER_UPDATE`
/// = 0, the default, then add, sub, mul, div, max, min): a repeated row accumulates, and for
/// an update the last one wins. The indices are read when the prediction is built; an index
/// out of range throws naming the layer (Core ML leaves it undefined; Tessera never writes
/// outside). `gatherND` clamps its indices to the axes, as the ML program `gather_nd` does.
extension NeuralNetworkLayerType {
    static let scatterLayers: [NeuralNetworkLayerType] = [
        NeuralNetworkLayerType(field: 935, cost: .dataMovement) { layer in
            // ScatterLayerParams: axis = 1, mode = 2. Inputs: container, indices, updates.
            try layer.requireCounts(inputs: 3...3)
            let axis = layer.params.int(1) ?? 0
            let mode = try scatterMode(layer, field: 2)
            return { args in
                let d = args[0].asFloat
                let a = try d.axis(axis, op: "scatter")
                let i = args[1]
                let u = args[2].asFloat
                let expected = Array(d.shape[..<a]) + i.shape + Array(d.shape[(a + 1)...])
                try require(
                    u.scalarCount == expected.reduce(1, *),
                    "updates \(u.shape) do not fit container \(d.shape) and indices \(i.shape) along axis \(a); "
                        + "expected \(expected)")
                let rows = try scatterIndices(i, sizes: [d.shape[a]])
                let outer = d.shape[..<a].reduce(1, *)
                let inner = d.shape[(a + 1)...].reduce(1, *)
                let combined = try MILOp.scatterRows(
                    d.reshaped(to: [outer, d.shape[a], inner]), rows: rows,
                    updates: u.reshaped(to: [outer, rows.count, inner]), mode: mode)
                return [combined.reshaped(to: d.shape)]
            }
        },
        NeuralNetworkLayerType(field: 945, cost: .dataMovement) { layer in
            // ScatterNDLayerParams: mode = 1. Inputs: container, indices [..., K], updates.
            try layer.requireCounts(inputs: 3...3)
            let mode = try scatterMode(layer, field: 1)
            return { args in
                let (d, i, u) = (args[0].asFloat, args[1], args[2].asFloat)
                try require(i.rank >= 1, "indices \(i.shape) need rank ≥ 1")
                let k = i.shape[i.rank - 1]
                try require(k >= 1 && k <= d.rank, "index vectors of length \(k) do not fit container \(d.shape)")
                let expected = Array(i.shape.dropLast()) + Array(d.shape[k...])
                try require(
                    u.scalarCount == expected.reduce(1, *),
                    "updates \(u.shape) do not fit container \(d.shape) and indices \(i.shape); expected \(expected)")
                let addressed = Array(d.shape[..<k])
                let rows = try scatterIndices(i, sizes: addressed)
                let inner = d.shape[k...].reduce(1, *)
                let combined = try MILOp.scatterRows(
                    d.reshaped(to: [1, addressed.reduce(1, *), inner]), rows: rows,
                    updates: u.reshaped(to: [1, rows.count, inner]), mode: mode)
                return [combined.reshaped(to: d.shape)]
            }
        },
        NeuralNetworkLayerType(field: 954, cost: .dataMovement) { layer in
            // ScatterAlongAxisLayerParams: axis = 1, mode = 2. Inputs: container, indices,
            // updates (indices and updates share a shape: the container's but along `axis`).
            try layer.requireCounts(inputs: 3...3)
            let axis = layer.params.int(1) ?? 0
            let mode = try scatterMode(layer, field: 2)
            return { args in
                let (d, i, u) = (args[0].asFloat, args[1], args[2].asFloat)
                let a = try d.axis(axis, op: "scatterAlongAxis")
                try require(
                    i.rank == d.rank && u.shape == i.shape
                        && (0..<d.rank).allSatisfy { $0 == a || i.shape[$0] == d.shape[$0] },
                    "indices \(i.shape) and updates \(u.shape) do not fit container \(d.shape) along axis \(a)")
                // Every element of the indices names one element of the container: its own
                // position with the axis coordinate replaced.
                let along = try scatterIndices(i, sizes: [d.shape[a]])
                let inner = d.shape[(a + 1)...].reduce(1, *)
                let (count, size) = (i.shape[a], d.shape[a])
                let rows = along.indices.map { p in
                    let (outer, rest) = (p / (count * inner), p % inner)
                    return (outer * size + along[p]) * inner + rest
                }
                let combined = try MILOp.scatterRows(
                    d.reshaped(to: [1, d.scalarCount, 1]), rows: rows, updates: u.reshaped(to: [1, rows.count, 1]),
                    mode: mode)
                return [combined.reshaped(to: d.shape)]
            }
        },
        NeuralNetworkLayerType(field: 940, cost: .dataMovement) { layer in
            // GatherNDLayerParams: no fields. Inputs: params, indices [..., K].
            try layer.requireCounts(inputs: 2...2)
            return { args in [try MILOp.gatherND(args[0], args[1], batchDims: 0)] }
        },
    ]

    /// The layer's `ScatterMode` field.
    static func scatterMode(_ layer: NeuralNetworkLayerLowering, field: Int) throws -> MILOp.ScatterMode {
        let modes: [MILOp.ScatterMode] = [.update, .add, .sub, .mul, .div, .max, .min]
        let value = layer.params.int(field) ?? 0
        guard modes.indices.contains(value) else { throw layer.invalid("unknown scatter mode \(value)") }
        return modes[value]
    }

    /// Row-major positions in an array of `sizes` that the index tensor names: its values
    /// taken `sizes.count` at a time (truncated to integers, negative ones counted from the
    /// end).
    ///
    /// - Throws: ``OperandError`` for an index out of range.
    static func scatterIndices(_ indices: MLTensor, sizes: [Int]) throws -> [Int] {
        let values = indices.asFloat.scalars(of: Float.self)
        let k = sizes.count
        var rows: [Int] = []
        rows.reserveCapacity(values.count / Swift.max(k, 1))
        for start in stride(from: 0, to: values.count, by: k) {
            var row = 0
            for axis in 0..<k {
                let value = values[start + axis]
                try require(value.isFinite && Swift.abs(value) < 1e9, "index \(value) is out of range")
                var index = Int(value)
                if index < 0 { index += sizes[axis] }
                try require(
                    index >= 0 && index < sizes[axis],
                    "index \(Int(value)) is out of range for an axis of \(sizes[axis])")
                row = row * sizes[axis] + index
            }
            rows.append(row)
        }
        return rows
    }
}
