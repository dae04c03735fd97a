// Shape changes. Results share memory with the original where the layout allows (a reshape
// of contiguous elements, every expand, squeeze and transpose) and copy otherwise; either way
// they are independent values.

extension _MLShapedArrayCoreBacked {
    /// The same scalars in row-major order with a new shape (`numpy.reshape`, C order).
    ///
    /// ```swift
    /// let m = MLShapedArray<Float>(scalars: 0..<6, shape: [2, 3])
    /// m.reshaped(to: [3, 2])[scalarAt: 2, 0]     // 4
    /// ```
    ///
    /// - Precondition: `shape` has the same element count and no negative dimension.
    public func reshaped(to shape: [Int]) -> Self {
        Self(_core: _core.reshaped(to: shape, op: "\(Self._typeName).reshaped(to:)"))
    }

    /// The array with a new axis of size 1 inserted at `axis` (`numpy.expand_dims`).
    ///
    /// ```swift
    /// MLShapedArray<Float>(repeating: 0, shape: [2, 3]).expandingShape(at: 1).shape   // [2, 1, 3]
    /// ```
    ///
    /// - Parameter axis: The new axis's position; negative values count from the end of the
    ///   result. Must be in `-(rank + 1)...rank`.
    public func expandingShape(at axis: Int) -> Self {
        Self(_core: _core.expanding(at: axis, op: "\(Self._typeName).expandingShape(at:)"))
    }

    /// The array without its axes of size 1 (`numpy.squeeze`).
    ///
    /// ```swift
    /// MLShapedArray<Float>(repeating: 0, shape: [1, 3, 1]).squeezingShape().shape   // [3]
    /// ```
    public func squeezingShape() -> Self {
        Self(_core: _core.squeezed())
    }

    /// The array with its axes in reverse order (`numpy.transpose` with no axes; a matrix
    /// transpose for rank 2). A view: no scalars are copied.
    ///
    /// ```swift
    /// let m = MLShapedArray<Float>(scalars: 0..<6, shape: [2, 3])
    /// m.transposed().shape        // [3, 2]
    /// m.transposed().strides      // [1, 3]
    /// ```
    public func transposed() -> Self {
        Self(_core: _core.permuted(Array((0..<_core.rank).reversed()), op: "\(Self._typeName).transposed()"))
    }

    /// The array with its axes reordered: result axis `i` is axis `permutation[i]`
    /// (`numpy.transpose(a, permutation)`). A view: no scalars are copied.
    ///
    /// ```swift
    /// MLShapedArray<Float>(repeating: 0, shape: [2, 3, 4]).transposed(permutation: [2, 0, 1]).shape  // [4, 2, 3]
    /// ```
    ///
    /// - Precondition: `permutation` is a permutation of `0..<rank`.
    public func transposed(permutation: [Int]) -> Self {
        Self(_core: _core.permuted(permutation, op: "\(Self._typeName).transposed(permutation:)"))
    }
}
