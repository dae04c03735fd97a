import TesseraGraph
import TesseraKernels

extension MLTensor {
    /// Gathers elements or slices addressed by index vectors (`gather_nd`).
    ///
    /// `indices` is an `Int32` tensor of shape `[..., m]`, `m <= rank`: each length-`m` vector
    /// addresses the first `m` dimensions and selects the slice over the rest. The result has
    /// shape `indices.shape.dropLast() + shape[m...]`. Negative indices count from the end.
    ///
    /// A rank-1 `indices` tensor lists positions along the first dimension (it is read as
    /// shape `[n, 1]`), as in Core ML's example where `[2, 1]` on a 3×3 matrix gives rows 2
    /// and 1; write shape `[1, m]` for a single lookup vector of length `m`.
    ///
    /// ```swift
    /// let x = MLTensor(shape: [2, 2], scalars: [0, 1, 10, 11], scalarType: Float.self)
    /// x.gathering(atIndices: MLTensor(shape: [2, 2], scalars: [0, 0, 1, 1], scalarType: Int32.self))   // [0, 11]
    /// x.gathering(atIndices: MLTensor([1] as [Int32]))                                                 // [[10, 11]]
    /// ```
    ///
    /// - Precondition: `indices` is `Int32` with rank ≥ 1 and a last dimension at most `rank`;
    ///   every index is in range for its dimension (checked when the tensor is computed).
    public func gathering(atIndices indices: MLTensor) -> MLTensor {
        let vectors = indices.rank == 1 ? indices.reshaped(to: [indices.scalarCount, 1]) : indices
        return MLTensor(.gatherND, [self, vectors])
    }

    /// Gathers slices along an axis (`take`).
    ///
    /// The result has shape `shape[..<axis] + indices.shape + shape[(axis + 1)...]`; negative
    /// indices count from the end of the axis.
    ///
    /// ```swift
    /// let x = MLTensor(shape: [3, 3], scalars: [0, 1, 2, 10, 11, 12, 20, 21, 22], scalarType: Float.self)
    /// x.gathering(atIndices: MLTensor([2, 1] as [Int32]), alongAxis: 1)   // [[2, 1], [12, 11], [22, 21]]
    /// ```
    ///
    /// - Precondition: `axis` is in `-rank..<rank`; `indices` is `Int32` and every index is in
    ///   range (checked when the tensor is computed).
    public func gathering(atIndices indices: MLTensor, alongAxis axis: Int) -> MLTensor {
        guard let axis = normalizedAxis(axis, op: "gathering") else { return placeholder }
        return MLTensor(.gather(axis: axis), [self, indices])
    }

    /// Returns the tensor with elements replaced at indices along an axis (scatter).
    ///
    /// `indices` (`Int32`) and `replacement` share one shape, of the tensor's rank, no larger
    /// than the tensor off `axis` (a rank-0 replacement applies at every index):
    /// `result[i0, …, indices[i], …] = replacement[i]`. When two
    /// positions name the same element, the later one in row-major order wins.
    ///
    /// ```swift
    /// let x = MLTensor(zeros: [2, 3], scalarType: Float.self)
    /// let i = MLTensor(shape: [2, 1], scalars: [2, 0], scalarType: Int32.self)
    /// x.replacing(with: MLTensor(shape: [2, 1], scalars: [5, 7], scalarType: Float.self), atIndices: i, alongAxis: 1)
    /// // [[0, 0, 5], [7, 0, 0]]
    /// ```
    ///
    /// - Precondition: The shapes are as above, the scalar types match, and every index is in
    ///   range (checked when the tensor is computed).
    public func replacing(with replacement: MLTensor, atIndices indices: MLTensor, alongAxis axis: Int) -> MLTensor {
        var replacement = matchingLiteral(replacement)
        if replacement.rank == 0 && indices.rank > 0 {
            // A scalar (or literal) replacement applies at every index.
            replacement = MLTensor(.broadcast(indices.shape), [replacement])
        }
        guard let axis = normalizedAxis(axis, op: "replacing") else { return placeholder }
        return MLTensor(.scatter(axis: axis), [self, indices, replacement])
    }

    /// Returns the tensor with one scalar written at indices along an axis.
    ///
    /// ```swift
    /// logits.replacing(atIndices: bannedTokens, with: -Float.infinity, alongAxis: -1)
    /// ```
    ///
    /// - Precondition: `indices` is `Int32` with the tensor's rank, no larger off `axis`.
    public func replacing(atIndices indices: MLTensor, with replacement: some MLTensorScalar, alongAxis axis: Int)
        -> MLTensor
    {
        let value = MLTensor(.broadcast(indices.shape), [scalarOperand(replacement)])
        guard let axis = normalizedAxis(axis, op: "replacing") else { return placeholder }
        return MLTensor(.scatter(axis: axis), [self, indices, value])
    }

    /// Returns the tensor with `replacement` taken where `mask` is true.
    ///
    /// `mask` is a `Bool` tensor; `mask` and `replacement` broadcast to the tensor's shape,
    /// and the result has the tensor's shape and scalar type.
    ///
    /// ```swift
    /// let x = MLTensor([1, 2, 3] as [Float])
    /// x.replacing(with: MLTensor([4, 5, 6] as [Float]), where: MLTensor([false, true, false], scalarType: Bool.self))
    /// // [1, 5, 3]
    /// ```
    ///
    /// - Precondition: `mask` is `Bool`; both shapes broadcast to the tensor's shape.
    public func replacing(with replacement: MLTensor, where mask: MLTensor) -> MLTensor {
        let replacement = matchingLiteral(replacement)
        guard checkMask(mask, replacement: replacement.shape) else { return placeholder }
        return MLTensor(.select, [mask, replacement, self])
    }

    /// Returns the tensor with a scalar taken where `mask` is true.
    ///
    /// ```swift
    /// scores.replacing(with: -Float.infinity, where: scores .< 0.25)
    /// ```
    ///
    /// - Precondition: `mask` is `Bool` and broadcasts to the tensor's shape.
    public func replacing(with replacement: some MLTensorScalar, where mask: MLTensor) -> MLTensor {
        guard checkMask(mask, replacement: []) else { return placeholder }
        return MLTensor(.select, [mask, scalarOperand(replacement), self])
    }

    /// A literal tensor (`x.replacing(with: 0, ...)` through the tensor overload) in this
    /// tensor's scalar type.
    private func matchingLiteral(_ other: MLTensor) -> MLTensor {
        if let value = other.literal, other.kernelType != kernelType {
            return MLTensor.scalarConstant(value, type: kernelType)
        }
        return other
    }

    /// Whether `mask` is `Bool` and it and a replacement of shape `replacement` broadcast to
    /// this tensor's shape; traps otherwise (inside ``withShapeChecks(_:)``: records that and
    /// returns `false`).
    private func checkMask(_ mask: MLTensor, replacement: [Int]) -> Bool {
        MLTensor.check(
            mask.kernelType == .bool, "[replacing] the mask must be Bool, got \(mask.kernelType) \(mask.shape)")
            && MLTensor.check(
                StridedLayout.broadcastShape(mask.shape, shape) == shape,
                "[replacing] mask shape \(mask.shape) does not broadcast to the tensor's shape \(shape)")
            && MLTensor.check(
                StridedLayout.broadcastShape(replacement, shape) == shape,
                "[replacing] replacement shape \(replacement) does not broadcast to the tensor's shape \(shape)")
    }
}

// MARK: - Sorting

extension MLTensor {
    /// Returns the indices that sort the tensor along an axis.
    ///
    /// An `Int32` tensor of the same shape. The sort is stable: equal elements keep their
    /// order (lower index first) in both directions; NaN sorts above every number.
    ///
    /// ```swift
    /// MLTensor([1, 3, 2] as [Float]).argsort()                        // [0, 2, 1]
    /// MLTensor([1, 3, 3] as [Float]).argsort(descendingOrder: true)   // [1, 2, 0]
    /// ```
    ///
    /// - Parameters:
    ///   - axis: The axis to sort along; negative values count from the end.
    ///   - descendingOrder: Largest first when true (Core ML's default, `false`, is ascending).
    /// - Precondition: `axis` is in `-rank..<rank`.
    public func argsort(alongAxis axis: Int = -1, descendingOrder: Bool = false) -> MLTensor {
        guard let axis = normalizedAxis(axis, op: "argsort") else { return .placeholder(shape: shape, type: .int32) }
        return MLTensor(.argsort(axis: axis, descending: descendingOrder, count: shape[axis]), [self])
    }

    /// Returns the `k` largest elements along the last axis and their indices.
    ///
    /// Values keep the tensor's scalar type, indices are `Int32`; both have the tensor's shape
    /// with `k` as the last dimension, largest first. Ties are deterministic: the element
    /// with the lower index comes first (Core ML leaves tie order unspecified). One pass with
    /// a bounded heap when `k` is small against the axis.
    ///
    /// ```swift
    /// let (values, indices) = MLTensor(shape: [1, 5], scalars: [1, 2, 3, 4, 5]).topK(3)
    /// // values [[5, 4, 3]], indices [[4, 3, 2]]
    /// ```
    ///
    /// - Precondition: The rank is at least 1 and `k` is in `0...shape.last!`.
    public func topK(_ k: Int) -> (values: MLTensor, indices: MLTensor) {
        guard MLTensor.check(rank >= 1, "[topK] needs a tensor of rank ≥ 1, got shape \(shape)"),
            MLTensor.check(
                k >= 0 && k <= shape[rank - 1], "[topK] k = \(k) is larger than the last axis of shape \(shape)")
        else { return (placeholder, .placeholder(shape: shape, type: .int32)) }
        let indices = MLTensor(.argsort(axis: rank - 1, descending: true, count: k), [self])
        return (MLTensor(.gatherElements(axis: rank - 1), [self, indices]), indices)
    }
}
