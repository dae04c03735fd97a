import TesseraKernels
import TesseraTensor

/// `scatter` and `scatter_nd` with every accumulation mode: `update`, `add`, `sub`, `mul`,
/// `div`, `max`, `min` (the default is `add`, iOS 15 and iOS 17 forms alike).
///
/// Both become rows of one `[outer, rows, inner]` view of `data` that the updates combine
/// into, applied in index order: a repeated row accumulates (`add` sums every update into
/// it), and for `update` the last one wins. The indices are read when the prediction is
/// built (they choose the graph's shape, like a slice bound computed at run time); the data
/// and updates stay in the graph. `update` is one replacing scatter. The other modes run in
/// rounds, round `r` taking the `r`-th occurrence of every row, so no round names a row
/// twice: a gather of the current rows, the element-wise combination and a replacing
/// scatter. Rows named once, the usual case, take one round; the cost grows with the largest
/// number of times one row is named.
extension MILOp {
    static let scatterOps: [MILOp] = [
        // Batches run as a loop: the indices address rows of the whole (batched) data.
        MILOp("scatter", batch: .notSeparable, cost: .dataMovement) { lowering in
            let data = try lowering.tensor("data")
            let indices = try lowering.tensor("indices")
            let updates = try lowering.tensor("updates")
            let axis = try lowering.int("axis") ?? 0
            let mode = try lowering.scatterMode()
            return { args in
                let d = args[data]
                let a = try d.axis(axis, op: "scatter")
                let i = args[indices]
                let u = args[updates]
                let expected = Array(d.shape[..<a]) + i.shape + Array(d.shape[(a + 1)...])
                try require(
                    u.shape == expected,
                    "updates \(u.shape) do not fit data \(d.shape) and indices \(i.shape) along axis \(a); expected \(expected)"
                )
                let rows = try scatterIndices(i, size: d.shape[a])
                let outer = d.shape[..<a].reduce(1, *)
                let inner = d.shape[(a + 1)...].reduce(1, *)
                let view = d.reshaped(to: [outer, d.shape[a], inner])
                let combined = try scatterRows(
                    view, rows: rows, updates: u.reshaped(to: [outer, rows.count, inner]), mode: mode)
                return [combined.reshaped(to: d.shape)]
            }
        },
        MILOp("scatter_nd", batch: .notSeparable, cost: .dataMovement) { lowering in
            let data = try lowering.tensor("data")
            let indices = try lowering.tensor("indices")
            let updates = try lowering.tensor("updates")
            let mode = try lowering.scatterMode()
            return { args in
                let (d, i, u) = (args[data], args[indices], args[updates])
                try require(i.rank >= 1, "indices \(i.shape) need rank ≥ 1")
                let k = i.shape[i.rank - 1]
                try require(k >= 1 && k <= d.rank, "index vectors of length \(k) do not fit data \(d.shape)")
                let expected = Array(i.shape.dropLast()) + Array(d.shape[k...])
                try require(
                    u.shape == expected,
                    "updates \(u.shape) do not fit data \(d.shape) and indices \(i.shape); expected \(expected)")
                // Index vectors become rows of data viewed as [1, Π shape[..<k], Π shape[k...]].
                let addressed = Array(d.shape[..<k])
                let vectors = try scatterIndexValues(i)
                var rows: [Int] = []
                rows.reserveCapacity(vectors.count / k)
                for start in stride(from: 0, to: vectors.count, by: k) {
                    var row = 0
                    for axis in 0..<k {
                        var index = vectors[start + axis]
                        if index < 0 { index += addressed[axis] }
                        try require(
                            index >= 0 && index < addressed[axis],
                            "index \(vectors[start + axis]) is out of range for axis \(axis) of data \(d.shape)")
                        row = row * addressed[axis] + index
                    }
                    rows.append(row)
                }
                let inner = d.shape[k...].reduce(1, *)
                let view = d.reshaped(to: [1, addressed.reduce(1, *), inner])
                let combined = try scatterRows(
                    view, rows: rows, updates: u.reshaped(to: [1, rows.count, inner]), mode: mode)
                return [combined.reshaped(to: d.shape)]
            }
        },
    ]

    /// How a scatter combines an update with the element it lands on.
    enum ScatterMode: String, Sendable, CaseIterable {
        case update, add, sub, mul, div, max, min

        /// The element-wise op combining `current` with `update` (`nil` for replacement).
        var combination: (@Sendable (MLTensor, MLTensor) -> MLTensor)? {
            switch self {
            case .update: return nil
            case .add: return { $0 + $1 }
            case .sub: return { $0 - $1 }
            case .mul: return { $0 * $1 }
            case .div: return { $0 / $1 }
            case .max: return { pointwiseMax($0, $1) }
            case .min: return { pointwiseMin($0, $1) }
            }
        }
    }

    /// The index tensor's values, read on the calling thread.
    static func scatterIndexValues(_ indices: MLTensor) throws -> [Int] {
        try require(!indices.kernelType.isFloatingPoint, "indices must be integers, got \(indices.kernelType)")
        return indices.converted(to: .int32).scalars(of: Int32.self).map(Int.init)
    }

    /// Row indices along an axis of `size`, negative ones counted from the end; throws on one
    /// out of range (Core ML leaves them undefined; Tessera must not write outside).
    static func scatterIndices(_ indices: MLTensor, size: Int) throws -> [Int] {
        try scatterIndexValues(indices).map { index in
            let row = index < 0 ? index + size : index
            try require(row >= 0 && row < size, "index \(index) is out of range for an axis of size \(size)")
            return row
        }
    }

    /// `data` `[outer, R, inner]` with `updates[:, p, :]` combined into row `rows[p]`, for
    /// every `p` in order.
    static func scatterRows(_ data: MLTensor, rows: [Int], updates: MLTensor, mode: ScatterMode) throws -> MLTensor {
        let (outer, inner) = (data.shape[0], data.shape[2])
        let values = updates.converted(to: data.kernelType)
        if rows.isEmpty || outer == 0 || inner == 0 { return data }
        func replacing(_ target: MLTensor, at chosen: [Int], with replacement: MLTensor) -> MLTensor {
            let index = MLTensor(
                shape: [1, chosen.count, 1], scalars: chosen.map { Int32($0) }, scalarType: Int32.self)
            let elements = index.broadcast(to: [outer, chosen.count, inner])
            return target.replacing(with: replacement, atIndices: elements, alongAxis: 1)
        }
        guard let op = mode.combination else {
            // The graph's replacing scatter lets the later of two equal positions win.
            return replacing(data, at: rows, with: values)
        }
        // Round r: the positions holding the r-th occurrence of their row.
        var seen: [Int: Int] = [:]
        var rounds: [[Int]] = []
        for (position, row) in rows.enumerated() {
            let occurrence = seen[row, default: 0]
            seen[row] = occurrence + 1
            if occurrence == rounds.count { rounds.append([]) }
            rounds[occurrence].append(position)
        }
        var result = data
        for positions in rounds {
            let targets = positions.map { rows[$0] }
            let chosen =
                positions.count == rows.count
                ? values
                : values.gathering(
                    atIndices: MLTensor(
                        shape: [positions.count], scalars: positions.map { Int32($0) }, scalarType: Int32.self),
                    alongAxis: 1)
            let current = result.gathering(
                atIndices: MLTensor(shape: [targets.count], scalars: targets.map { Int32($0) }, scalarType: Int32.self),
                alongAxis: 1)
            result = replacing(result, at: targets, with: op(current, chosen))
        }
        return result
    }
}

extension OperationLowering {
    /// The `mode` parameter of a scatter (default `add`); throws on an unknown mode.
    func scatterMode() throws -> MILOp.ScatterMode {
        let name = try string("mode") ?? "add"
        guard let mode = MILOp.ScatterMode(rawValue: name) else {
            throw invalid("unknown scatter mode '\(name)'; MIL has \(MILOp.ScatterMode.allCases.map(\.rawValue))")
        }
        return mode
    }
}
