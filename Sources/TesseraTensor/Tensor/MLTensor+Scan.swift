import TesseraGraph

extension MLTensor {
    /// Returns the running sum along `axis`: inclusive (`x₀, x₀+x₁, …`) or `exclusive`
    /// (`0, x₀, …`), from the front or, with `reverse`, from the back.
    ///
    /// **Tessera package API** for MIL's `cumsum`; the public ``cumulativeSum(alongAxis:)`` is
    /// the inclusive forward form.
    ///
    /// ```swift
    /// MLTensor([1, 2, 3] as [Float]).cumulativeSum(alongAxis: 0, exclusive: true, reverse: true)   // [5, 3, 0]
    /// ```
    ///
    /// - Precondition: `axis` in `-rank..<rank`; not a `Bool` tensor.
    package func cumulativeSum(alongAxis axis: Int, exclusive: Bool, reverse: Bool) -> MLTensor {
        guard let axis = normalizedAxis(axis, op: "cumulativeSum") else { return placeholder }
        return MLTensor(.scan(product: false, axis: axis, exclusive: exclusive, reverse: reverse), [self])
    }
}
