extension CopyKernels {
    /// Picks elements or slices by index vectors (`tf.gather_nd`, ONNX `GatherND` with no batch
    /// dimensions).
    ///
    /// `indices` has shape `[..., m]` with `m <= rank`: each length-`m` vector addresses the
    /// first `m` axes of the contiguous operand and selects the slice over the remaining axes.
    /// The output shape is `indicesShape.dropLast() + shape[m...]`. Negative indices count from
    /// the end of their axis.
    ///
    /// ```swift
    /// // x [[0, 1], [10, 11]], indices [[0, 0], [1, 1]] -> [0, 11]
    /// CopyKernels.gatherND(from: x, shape: [2, 2], indices: idx, indicesShape: [2, 2],
    ///                      elementSize: 4, to: out)
    /// ```
    ///
    /// - Precondition: `indicesShape` has rank ≥ 1 and its last dimension is at most the
    ///   operand's rank; every index is in `-size..<size` for its axis.
    package static func gatherND(
        from: UnsafeRawPointer, shape: [Int], indices: UnsafePointer<Int32>, indicesShape: [Int], elementSize: Int,
        to: UnsafeMutableRawPointer
    ) {
        checkElementSize(elementSize, op: "gathering")
        kernelPrecondition(!indicesShape.isEmpty, "[gathering] indices must have rank ≥ 1, got shape []")
        let m = indicesShape[indicesShape.count - 1]
        kernelPrecondition(
            m <= shape.count,
            "[gathering] index vectors of length \(m) (indices \(indicesShape)) exceed the rank of \(shape)")
        let vectors = indicesShape.dropLast().reduce(1, *)
        let sliceBytes = shape[m...].reduce(1, *) * elementSize
        let strides = StridedLayout.contiguousStrides(for: shape)
        for v in 0..<vectors {
            var offset = 0
            for d in 0..<m {
                let index = Int(indices[v * m + d])
                kernelPrecondition(
                    index >= -shape[d] && index < shape[d],
                    "[gathering] index \(index) is out of range for axis \(d) of shape \(shape) (indices \(indicesShape))"
                )
                offset += (index < 0 ? index + shape[d] : index) * strides[d]
            }
            if sliceBytes > 0 {
                (to + v * sliceBytes).copyMemory(from: from + offset * elementSize, byteCount: sliceBytes)
            }
        }
    }
}
