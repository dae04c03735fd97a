import TesseraGraph

extension MLTensor {
    /// Returns the tensor padded by repeating its edge values (`[1, 1, | 1, 2, 3 | 3, 3]`).
    ///
    /// **Tessera package API** for MIL's `replicate` padding, which the public
    /// ``PaddingMode`` has no case for.
    ///
    /// ```swift
    /// MLTensor([1, 2, 3] as [Float]).edgePadded(forSizes: [(2, 2)])   // [1, 1, 1, 2, 3, 3, 3]
    /// ```
    ///
    /// - Precondition: One non-negative pair per axis; an empty axis is not padded.
    package func edgePadded(forSizes sizes: [(before: Int, after: Int)]) -> MLTensor {
        guard
            MLTensor.check(
                sizes.count == rank
                    && zip(sizes, shape).allSatisfy { pair, size in
                        pair.before >= 0 && pair.after >= 0 && (size > 0 || pair.before + pair.after == 0)
                    },
                "[edgePadded] \(sizes) does not fit shape \(shape) (one non-negative pair per axis; empty axes "
                    + "cannot be padded)")
        else { return placeholder }
        return MLTensor(.pad(before: sizes.map(\.before), after: sizes.map(\.after), mode: .edge), [self])
    }
}
