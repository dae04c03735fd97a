/// The element count of a shape, checked for overflow: the one product that every reader of
/// outside shapes (model files, `.npy` headers, multi-array and shaped-array shapes, graph op
/// rules) uses before it allocates or indexes.
extension Array where Element == Int {
    /// The product of the sizes, or `nil` when it does not fit in an `Int`. Sizes are not
    /// checked for sign (a caller that takes outside shapes checks `size >= 0` first); an empty
    /// shape (a scalar) has one element.
    ///
    /// ```swift
    /// [2, 3, 4].checkedElementCount          // 24
    /// [1 << 40, 1 << 40].checkedElementCount  // nil
    /// ```
    package var checkedElementCount: Int? {
        var count = 1
        for size in self {
            let (product, overflow) = count.multipliedReportingOverflow(by: size)
            if overflow { return nil }
            count = product
        }
        return count
    }
}
