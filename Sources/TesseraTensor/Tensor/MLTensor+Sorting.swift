import TesseraGraph

extension MLTensor {
    /// Returns the indices (`Int32`) of the first `count` elements along `axis` in sorted
    /// order, ascending or descending; ties keep their original order.
    ///
    /// **Tessera package API** for MIL's `topk`: the public ``argsort(alongAxis:descendingOrder:)``
    /// sorts the whole axis and ``topK(_:)`` only the last one.
    ///
    /// ```swift
    /// MLTensor([3, 1, 2] as [Float]).argsort(alongAxis: 0, descendingOrder: true, count: 2)   // [0, 2]
    /// ```
    ///
    /// - Precondition: `axis` in `-rank..<rank`; `count` in `0...shape[axis]`.
    package func argsort(alongAxis axis: Int, descendingOrder: Bool, count: Int) -> MLTensor {
        guard let axis = normalizedAxis(axis, op: "argsort") else { return placeholder }
        return MLTensor(.argsort(axis: axis, descending: descendingOrder, count: count), [self])
    }

    /// Returns `result[p] = self[p with p[axis] = indices[p]]` (`take_along_axis`).
    ///
    /// **Tessera package API.**
    ///
    /// ```swift
    /// x.gathering(elementsAt: x.argsort(alongAxis: 1, descendingOrder: true, count: 2), alongAxis: 1)
    /// ```
    ///
    /// - Precondition: `indices` is `Int32` with the tensor's rank and, off `axis`, its sizes;
    ///   every index is in range (checked when the tensor is computed).
    package func gathering(elementsAt indices: MLTensor, alongAxis axis: Int) -> MLTensor {
        guard let axis = normalizedAxis(axis, op: "gathering") else { return placeholder }
        return MLTensor(.gatherElements(axis: axis), [self, indices])
    }
}
