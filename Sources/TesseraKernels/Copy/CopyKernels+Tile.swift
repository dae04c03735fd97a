extension CopyKernels {
    /// Repeats a strided operand along every axis (`numpy.tile` with one multiple per axis).
    ///
    /// The output has shape `layout.shape[d] * multiples[d]` and element
    /// `out[i0, …] = x[i0 % shape[0], …]`. A multiple of 0 gives an empty output.
    ///
    /// ```swift
    /// // [[1, 2]] tiled by [2, 3] -> [[1, 2, 1, 2, 1, 2], [1, 2, 1, 2, 1, 2]]
    /// CopyKernels.tile(from: x, layout: StridedLayout(contiguous: [1, 2]), multiples: [2, 3],
    ///                  elementSize: 4, to: out)
    /// ```
    ///
    /// - Parameters:
    ///   - from: The base pointer of the operand.
    ///   - layout: The operand's layout.
    ///   - multiples: How many copies along each axis; one per dimension.
    ///   - elementSize: Bytes per element: 1, 2, 4 or 8.
    ///   - to: The contiguous destination.
    /// - Precondition: `multiples.count == layout.rank` and no multiple is negative.
    package static func tile(
        from: UnsafeRawPointer, layout: StridedLayout, multiples: [Int], elementSize: Int,
        to: UnsafeMutableRawPointer
    ) {
        checkElementSize(elementSize, op: "tile")
        kernelPrecondition(
            multiples.count == layout.rank,
            "[tile] \(multiples.count) multiples \(multiples) for shape \(layout.shape) of rank \(layout.rank)")
        kernelPrecondition(multiples.allSatisfy { $0 >= 0 }, "[tile] negative multiple in \(multiples)")
        let outShape = zip(layout.shape, multiples).map { $0 * $1 }
        let outStrides = StridedLayout.contiguousStrides(for: outShape)
        // View the output as [m0, n0, m1, n1, …]: the copy index along each m_d reads the
        // source with stride 0, so one strided copy writes every tile.
        var shape: [Int] = []
        var srcStrides: [Int] = []
        var dstStrides: [Int] = []
        for d in 0..<layout.rank {
            shape += [multiples[d], layout.shape[d]]
            srcStrides += [0, layout.strides[d]]
            dstStrides += [layout.shape[d] * outStrides[d], outStrides[d]]
        }
        stridedCopy(
            shape: shape, from: from + layout.offset * elementSize, strides: srcStrides, to: to, strides: dstStrides,
            elementSize: elementSize)
    }
}
