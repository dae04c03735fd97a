extension CopyKernels {
    /// The shape of `shapes` joined along `axis`, and `axis` counted from the front: every
    /// check a concatenation makes before it copies, shared by the kernel, `MLShapedArray` and
    /// `MLMultiArray`.
    ///
    /// ```swift
    /// CopyKernels.concatenatedShape([[2, 3], [4, 3]], axis: -2, op: "concatenate")   // (0, [6, 3])
    /// ```
    ///
    /// - Precondition: There is at least one shape, the rank is at least 1, `axis` is in
    ///   `-rank..<rank`, and the shapes agree off the axis; otherwise the call traps with a
    ///   message that starts with `[op]` and names the shapes.
    package static func concatenatedShape(_ shapes: [[Int]], axis: Int, op: String) -> (axis: Int, shape: [Int]) {
        kernelPrecondition(!shapes.isEmpty, "[\(op)] needs at least one operand")
        let first = shapes[0]
        let rank = first.count
        kernelPrecondition(rank >= 1, "[\(op)] cannot concatenate rank-0 operands")
        let axis = normalizedAxis(axis, rank: rank, shape: first, op: op)
        var joined = first
        joined[axis] = 0
        for shape in shapes {
            var matches = shape.count == rank
            if matches {
                for d in 0..<rank where d != axis && shape[d] != first[d] { matches = false }
            }
            kernelPrecondition(
                matches, "[\(op)] shapes must agree off axis \(axis): \(first) vs \(shape) (all shapes: \(shapes))")
            joined[axis] += shape[axis]
        }
        return (axis, joined)
    }

    /// Joins strided operands along an axis into one contiguous buffer (`numpy.concatenate`).
    ///
    /// Every input must have the same rank and the same size on every dimension but `axis`;
    /// the output's size along `axis` is the sum of the inputs'. Each input is read through
    /// its own layout, so views (transposes, broadcasts, slices) need no copy first. Inputs of
    /// size 0 along the axis contribute nothing.
    ///
    /// ```swift
    /// // [2, 3] ++ [4, 3] along axis 0 -> [6, 3]
    /// CopyKernels.concatenate(
    ///     inputs: [(a, StridedLayout(contiguous: [2, 3])), (b, StridedLayout(contiguous: [4, 3]))],
    ///     axis: 0, elementSize: 4, to: out)
    /// ```
    ///
    /// - Parameters:
    ///   - inputs: Each operand's base pointer and layout, in output order.
    ///   - axis: The axis to join along; negative values count from the end.
    ///   - elementSize: Bytes per element: 1, 2, 4 or 8.
    ///   - to: The contiguous destination; must not overlap any input.
    /// - Precondition: There is at least one input, the inputs have rank at least 1, `axis` is
    ///   in `-rank..<rank`, and the shapes agree off the axis.
    package static func concatenate(
        inputs: [(pointer: UnsafeRawPointer, layout: StridedLayout)], axis: Int, elementSize: Int,
        to: UnsafeMutableRawPointer
    ) {
        checkElementSize(elementSize, op: "concatenate")
        let (axis, outShape) = concatenatedShape(inputs.map(\.layout.shape), axis: axis, op: "concatenate")
        let outStrides = StridedLayout.contiguousStrides(for: outShape)
        var start = 0
        for input in inputs {
            let layout = input.layout
            stridedCopy(
                shape: layout.shape, from: input.pointer + layout.offset * elementSize, strides: layout.strides,
                to: to + start * outStrides[axis] * elementSize, strides: outStrides, elementSize: elementSize)
            start += layout.shape[axis]
        }
    }

    /// Cuts a strided operand along an axis into contiguous pieces (`numpy.split` with sizes).
    ///
    /// Piece `i` has the input's shape with `sizes[i]` on `axis` and holds the next `sizes[i]`
    /// slices along it. Sizes of 0 are allowed (their piece is empty and not written).
    ///
    /// ```swift
    /// // [6, 3] -> [2, 3] and [4, 3]
    /// CopyKernels.split(from: x, layout: StridedLayout(contiguous: [6, 3]), axis: 0,
    ///                   sizes: [2, 4], elementSize: 4, to: [p0, p1])
    /// ```
    ///
    /// - Parameters:
    ///   - from: The base pointer of the operand.
    ///   - layout: The operand's layout.
    ///   - axis: The axis to cut; negative values count from the end.
    ///   - sizes: Each piece's size along `axis`; they sum to `layout.shape[axis]`.
    ///   - elementSize: Bytes per element: 1, 2, 4 or 8.
    ///   - to: One contiguous destination per piece.
    /// - Precondition: The rank is at least 1, `axis` is in range, `sizes` are non-negative and
    ///   sum to the axis size, and `to.count == sizes.count`.
    package static func split(
        from: UnsafeRawPointer, layout: StridedLayout, axis: Int, sizes: [Int], elementSize: Int,
        to: [UnsafeMutableRawPointer]
    ) {
        checkElementSize(elementSize, op: "split")
        kernelPrecondition(layout.rank >= 1, "[split] cannot split a rank-0 operand")
        let axis = normalizedAxis(axis, rank: layout.rank, shape: layout.shape, op: "split")
        kernelPrecondition(
            sizes.allSatisfy { $0 >= 0 } && sizes.reduce(0, +) == layout.shape[axis],
            "[split] sizes \(sizes) do not add up to \(layout.shape[axis]), the size of axis \(axis) of \(layout.shape)"
        )
        kernelPrecondition(
            to.count == sizes.count, "[split] \(sizes.count) sizes but \(to.count) destinations")
        var start = 0
        for (piece, size) in sizes.enumerated() {
            var shape = layout.shape
            shape[axis] = size
            let offset = layout.offset + start * layout.strides[axis]
            stridedCopy(
                shape: shape, from: from + offset * elementSize, strides: layout.strides, to: to[piece],
                strides: StridedLayout.contiguousStrides(for: shape), elementSize: elementSize)
            start += size
        }
    }
}
