/// How ``CopyKernels/scatterElements(into:shape:axis:indices:indicesShape:updates:updatesLayout:elementSize:mode:scalarType:)``
/// combines an update with the value already there.
package enum ScatterMode: Sendable, Hashable {
    /// The update replaces the value. When several updates hit one element, the last in
    /// row-major order of the indices wins.
    case replace
    /// The update is added to the value (float32 only); duplicates accumulate.
    case add
}

extension CopyKernels {
    /// Picks one element per index along an axis (`torch.gather`, `numpy.take_along_axis`,
    /// ONNX `GatherElements`).
    ///
    /// `indices` has the operand's rank; the output has `indicesShape` and
    /// `out[i0, …, ia, …] = x[i0, …, indices[i0, …, ia, …], …]` for `axis = a`. Off the axis the
    /// indices' dimensions may be smaller than the operand's (as in PyTorch). Negative indices
    /// count from the end of the axis.
    ///
    /// ```swift
    /// // x [2, 3], indices [[2, 0], [1, 1]] along axis 1 -> [[x02, x00], [x11, x11]]
    /// CopyKernels.gatherElements(from: x, layout: StridedLayout(contiguous: [2, 3]), axis: 1,
    ///                            indices: idx, indicesShape: [2, 2], elementSize: 4, to: out)
    /// ```
    ///
    /// - Parameters:
    ///   - from: The base pointer of the operand.
    ///   - layout: The operand's layout; rank at least 1.
    ///   - axis: The axis the indices select along; negative values count from the end.
    ///   - indices: Contiguous indices of shape `indicesShape`.
    ///   - indicesShape: Same rank as the operand, each dimension off `axis` at most the
    ///     operand's.
    ///   - elementSize: Bytes per element: 1, 2, 4 or 8.
    ///   - to: The contiguous destination of shape `indicesShape`.
    /// - Precondition: The shapes are as above and every index is in `-size..<size`; the
    ///   message names the index and the axis size.
    package static func gatherElements(
        from: UnsafeRawPointer, layout: StridedLayout, axis: Int, indices: UnsafePointer<Int32>, indicesShape: [Int],
        elementSize: Int, to: UnsafeMutableRawPointer
    ) {
        checkElementSize(elementSize, op: "gatherElements")
        let axis = checkElementIndexShapes(
            shape: layout.shape, axis: axis, indicesShape: indicesShape, op: "gatherElements")
        if indicesShape.contains(0) { return }
        let kernel = ElementIndexLoop(
            data: UnsafeMutableRawPointer(mutating: from + layout.offset * elementSize), dataStrides: layout.strides,
            dataShape: layout.shape, axis: axis, indices: indices, indicesShape: indicesShape,
            other: to, otherStrides: StridedLayout.contiguousStrides(for: indicesShape), direction: .gather)
        dispatch(kernel, elementSize: elementSize, op: "gatherElements")
    }

    /// Writes updates into a buffer at positions chosen along an axis (`torch.scatter` /
    /// `scatter_add`, ONNX `ScatterElements`), in place.
    ///
    /// `data` already holds the base values. For every position `i` of the indices,
    /// `data[i0, …, indices[i], …] = updates[i]` (`.replace`) or `+= updates[i]` (`.add`, float32
    /// only). With `.replace`, duplicate targets keep the last update in row-major order of the
    /// indices, so the result is deterministic. Work is split across threads only over the
    /// dimensions before `axis`, where targets cannot collide.
    ///
    /// ```swift
    /// // data [3] = [0, 0, 0], indices [2, 0], updates [5, 7] -> [7, 0, 5]
    /// CopyKernels.scatterElements(into: data, shape: [3], axis: 0, indices: idx, indicesShape: [2],
    ///                             updates: upd, updatesLayout: StridedLayout(contiguous: [2]),
    ///                             elementSize: 4, mode: .replace)
    /// ```
    ///
    /// - Parameters:
    ///   - into: The contiguous buffer of shape `shape`, read and written.
    ///   - shape: The shape of `into`; rank at least 1.
    ///   - axis: The axis the indices select along; negative values count from the end.
    ///   - indices: Contiguous indices of shape `indicesShape`.
    ///   - indicesShape: Same rank as `shape`, each dimension off `axis` at most `shape`'s.
    ///   - updates: The base pointer of the updates.
    ///   - updatesLayout: The updates' layout; its shape is `indicesShape`.
    ///   - elementSize: Bytes per element: 1, 2, 4 or 8.
    ///   - mode: Replace or add.
    ///   - scalarType: The element type; required for `.add` (which supports `.float32` only).
    /// - Precondition: The shapes are as above, every index is in `-size..<size`, and `.add` is
    ///   used with `scalarType == .float32` and `elementSize == 4`.
    package static func scatterElements(
        into: UnsafeMutableRawPointer, shape: [Int], axis: Int, indices: UnsafePointer<Int32>, indicesShape: [Int],
        updates: UnsafeRawPointer, updatesLayout: StridedLayout, elementSize: Int, mode: ScatterMode = .replace,
        scalarType: KernelScalarType? = nil
    ) {
        checkElementSize(elementSize, op: "scatterElements")
        let axis = checkElementIndexShapes(shape: shape, axis: axis, indicesShape: indicesShape, op: "scatterElements")
        kernelPrecondition(
            updatesLayout.shape == indicesShape,
            "[scatterElements] updates shape \(updatesLayout.shape) differs from indices shape \(indicesShape)")
        if mode == .add {
            kernelPrecondition(
                scalarType == .float32 && elementSize == 4,
                "[scatterElements] add mode supports float32 only, got \(scalarType.map { "\($0)" } ?? "no type") "
                    + "with element size \(elementSize)")
        }
        if indicesShape.contains(0) { return }
        let kernel = ElementIndexLoop(
            data: into, dataStrides: StridedLayout.contiguousStrides(for: shape), dataShape: shape, axis: axis,
            indices: indices, indicesShape: indicesShape,
            other: UnsafeMutableRawPointer(mutating: updates + updatesLayout.offset * elementSize),
            otherStrides: updatesLayout.strides, direction: mode == .add ? .scatterAdd : .scatter)
        dispatch(kernel, elementSize: elementSize, op: "scatterElements")
    }

    /// Checks the shapes shared by `gatherElements` and `scatterElements`; returns the axis.
    static func checkElementIndexShapes(shape: [Int], axis: Int, indicesShape: [Int], op: String) -> Int {
        kernelPrecondition(shape.count >= 1, "[\(op)] cannot index a rank-0 operand")
        let axis = normalizedAxis(axis, rank: shape.count, shape: shape, op: op)
        kernelPrecondition(
            indicesShape.count == shape.count,
            "[\(op)] indices shape \(indicesShape) must have the rank of shape \(shape)")
        for d in 0..<shape.count {
            kernelPrecondition(
                indicesShape[d] >= 0 && (d == axis || indicesShape[d] <= shape[d]),
                "[\(op)] indices shape \(indicesShape) exceeds shape \(shape) on axis \(d)")
        }
        return axis
    }

    /// One loop for gatherElements and scatterElements: walks the indices in row-major order;
    /// `data` is the indexed operand, `other` the operand laid out like the indices.
    struct ElementIndexLoop: CopyWordKernel {
        enum Direction { case gather, scatter, scatterAdd }

        let data: UnsafeMutableRawPointer
        let dataStrides: [Int]
        let dataShape: [Int]
        let axis: Int
        let indices: UnsafePointer<Int32>
        let indicesShape: [Int]
        let other: UnsafeMutableRawPointer
        let otherStrides: [Int]
        let direction: Direction

        func run<W: CopyWord>(_: W.Type) {
            let size = MemoryLayout<W>.size
            let rank = indicesShape.count
            let n = indicesShape[rank - 1]
            let rows = CopyKernels.product(indicesShape, 0..<(rank - 1))
            let axisSize = dataShape[axis]
            let axisStride = dataStrides[axis]
            let op = direction == .gather ? "gatherElements" : "scatterElements"
            // The data position of an index position, without the axis's contribution.
            var baseStrides = dataStrides
            baseStrides[axis] = 0
            let dataStep = baseStrides[rank - 1]
            let otherStep = otherStrides[rank - 1]
            // Scatters may only split where targets cannot collide: over dimensions before
            // the axis, in whole blocks of rows.
            let rowsPerUnit = direction == .gather ? 1 : CopyKernels.product(indicesShape, axis..<(rank - 1))
            let units = rows / rowsPerUnit
            let cost = ParallelCost(nanosecondsPerItem: Double(rowsPerUnit * n) * 1.0 + 10)
            let indicesShape = self.indicesShape
            let data = self.data
            let other = self.other
            let otherStrides = self.otherStrides
            let indices = self.indices
            let direction = self.direction
            parallelFor(count: units, cost: cost) { unitRange in
                for row in (unitRange.lowerBound * rowsPerUnit)..<(unitRange.upperBound * rowsPerUnit) {
                    var rest = row
                    var dataBase = 0
                    var otherBase = 0
                    for d in stride(from: rank - 2, through: 0, by: -1) {
                        let i = rest % indicesShape[d]
                        rest /= indicesShape[d]
                        dataBase += i * baseStrides[d]
                        otherBase += i * otherStrides[d]
                    }
                    let rowIndices = indices + row * n
                    for j in 0..<n {
                        var index = Int(rowIndices[j])
                        kernelPrecondition(
                            index >= -axisSize && index < axisSize,
                            "[\(op)] index \(index) is out of range for axis \(axis) of size \(axisSize) "
                                + "(shape \(dataShape))")
                        if index < 0 { index += axisSize }
                        // Offsets cannot overflow: every index was checked against the axis above.
                        let d = data + (dataBase &+ j &* dataStep &+ index &* axisStride) &* size
                        let o = other + (otherBase &+ j &* otherStep) &* size
                        switch direction {
                        case .gather:
                            o.storeBytes(of: d.loadUnaligned(as: W.self), as: W.self)
                        case .scatter:
                            d.storeBytes(of: o.loadUnaligned(as: W.self), as: W.self)
                        case .scatterAdd:
                            d.storeBytes(
                                of: d.loadUnaligned(as: Float.self) + o.loadUnaligned(as: Float.self), as: Float.self)
                        }
                    }
                }
            }
        }
    }
}
