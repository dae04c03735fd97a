import TesseraTensor

/// `non_zero`: the indices of the non-zero elements, `[N, rank]` Int32 in row-major order,
/// `N` the number of non-zero elements.
///
/// `N` depends on the data, and a lowered op builds its nodes with concrete shapes, so the
/// input is materialized when the prediction is built (on the calling thread, as a slice
/// bound computed at run time is) and the indices are a constant of the graph that follows.
/// Ops after it see an ordinary tensor of the right shape (`shape` of it gives `[N, rank]`).
extension MILOp {
    static let nonZeroOps: [MILOp] = [
        // The count mixes the items of a batch: batches run as a loop.
        MILOp("non_zero", batch: .notSeparable, cost: .reduction) { lowering in
            let x = try lowering.tensor("x")
            return { args in [nonZeroIndices(args[x])] }
        }
    ]

    /// The row-major positions of the non-zero elements of `x`, as `[N, rank]` Int32.
    static func nonZeroIndices(_ x: MLTensor) -> MLTensor {
        let nonZero: [Bool] =
            x.kernelType.isFloatingPoint
            ? x.asFloat.scalars(of: Float.self).map { $0 != 0 }
            : x.converted(to: .int32).scalars(of: Int32.self).map { $0 != 0 }
        let rank = x.rank
        var indices: [Int32] = []
        var position = [Int](repeating: 0, count: rank)
        for isNonZero in nonZero {
            if isNonZero { indices += position.map { Int32($0) } }
            var axis = rank - 1
            while axis >= 0 {
                position[axis] += 1
                if position[axis] < x.shape[axis] { break }
                position[axis] = 0
                axis -= 1
            }
        }
        return MLTensor(shape: [indices.count / Swift.max(rank, 1), rank], scalars: indices, scalarType: Int32.self)
    }
}
