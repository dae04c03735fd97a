extension CopyKernels {
    /// Picks slices along an axis by index (`numpy.take(x, indices, axis)`).
    ///
    /// The output shape is `x.shape[..<axis] + indicesShape + x.shape[(axis + 1)...]`, written
    /// contiguously: `out[o…, j…, i…] = x[o…, indices[j…], i…]`. Negative indices count from
    /// the end of the axis. Every index is checked before anything is read.
    ///
    /// ```swift
    /// // Embedding lookup: table [vocab, dim], tokens [2, 5] -> [2, 5, dim]
    /// CopyKernels.gather(from: table, layout: StridedLayout(contiguous: [vocab, dim]), axis: 0,
    ///                    indices: tokens, indicesShape: [2, 5], elementSize: 4, to: out)
    /// ```
    ///
    /// - Parameters:
    ///   - from: The base pointer of the operand.
    ///   - layout: The operand's layout; rank at least 1.
    ///   - axis: The axis to index; negative values count from the end.
    ///   - indices: `indicesShape`'s count of contiguous indices.
    ///   - indicesShape: The shape of `indices` (empty for a single index, which drops the axis).
    ///   - elementSize: Bytes per element: 1, 2, 4 or 8.
    ///   - to: The contiguous destination; must not overlap the input.
    /// - Precondition: `axis` is in range and every index is in `-size..<size` for the axis's
    ///   size; the message names the index and the size.
    package static func gather(
        from: UnsafeRawPointer, layout: StridedLayout, axis: Int, indices: UnsafePointer<Int32>, indicesShape: [Int],
        elementSize: Int, to: UnsafeMutableRawPointer
    ) {
        checkElementSize(elementSize, op: "gather")
        kernelPrecondition(layout.rank >= 1, "[gather] cannot index a rank-0 operand")
        kernelPrecondition(
            indicesShape.allSatisfy { $0 >= 0 }, "[gather] negative dimension in indices shape \(indicesShape)")
        let axis = normalizedAxis(axis, rank: layout.rank, shape: layout.shape, op: "gather")
        let axisSize = layout.shape[axis]
        let indexCount = indicesShape.reduce(1, *)
        var normalized = [Int](repeating: 0, count: indexCount)
        for j in 0..<indexCount {
            let index = Int(indices[j])
            kernelPrecondition(
                index >= -axisSize && index < axisSize,
                "[gather] index \(index) is out of range for axis \(axis) of size \(axisSize) (shape \(layout.shape))")
            normalized[j] = index < 0 ? index + axisSize : index
        }
        let outerShape = Array(layout.shape[..<axis])
        let innerShape = Array(layout.shape[(axis + 1)...])
        let rows = outerShape.reduce(1, *) * indexCount
        let innerCount = innerShape.reduce(1, *)
        if rows == 0 || innerCount == 0 { return }
        let inner = CollapsedLayouts(
            shape: innerShape,
            strides: [StridedLayout.contiguousStrides(for: innerShape), Array(layout.strides[(axis + 1)...])])
        let kernel = GatherRows(
            src: from + layout.offset * elementSize, dst: to, outerShape: outerShape,
            outerStrides: Array(layout.strides[..<axis]), axisStride: layout.strides[axis], indices: normalized,
            innerShape: inner.shape, innerSrcStrides: inner.strides[1], innerDstStrides: inner.strides[0],
            innerCount: innerCount)
        dispatch(kernel, elementSize: elementSize, op: "gather")
    }

    /// `numpy.take`: one row per (outer index, index) pair, each a strided box copy.
    struct GatherRows: CopyWordKernel {
        let src: UnsafeRawPointer
        let dst: UnsafeMutableRawPointer
        let outerShape: [Int]
        let outerStrides: [Int]
        let axisStride: Int
        let indices: [Int]
        let innerShape: [Int]
        let innerSrcStrides: [Int]
        let innerDstStrides: [Int]
        let innerCount: Int

        func run<W: CopyWord>(_: W.Type) {
            let size = MemoryLayout<W>.size
            let m = indices.count
            let rows = outerShape.reduce(1, *) * m
            let rowBytes = innerCount * size
            let contiguousInner = innerShape.count == 1 && innerSrcStrides[0] == 1
            let cost = ParallelCost(nanosecondsPerItem: CopyKernels.nanosecondsPerByte * Double(rowBytes) + 10)
            let src = self.src
            let dst = self.dst
            parallelFor(count: rows, cost: cost) { range in
                var currentOuter = -1
                var outerOffset = 0
                indices.withUnsafeBufferPointer { indices in
                    for row in range {
                        let outer = row / m
                        if outer != currentOuter {
                            currentOuter = outer
                            outerOffset = 0
                            var rest = outer
                            for axis in stride(from: outerShape.count - 1, through: 0, by: -1) {
                                outerOffset += (rest % outerShape[axis]) * outerStrides[axis]
                                rest /= outerShape[axis]
                            }
                        }
                        let s = src + (outerOffset + indices[row - outer * m] * axisStride) * size
                        let d = dst + row * rowBytes
                        if contiguousInner {
                            d.copyMemory(from: s, byteCount: rowBytes)
                        } else if innerCount == 1 {
                            d.storeBytes(of: s.loadUnaligned(as: W.self), as: W.self)
                        } else {
                            CopyKernels.copyBoxSerial(
                                W.self, shape: innerShape, from: s, strides: innerSrcStrides, to: d,
                                strides: innerDstStrides)
                        }
                    }
                }
            }
        }
    }

    /// Copies a small box element by element on the calling thread, one row at a time.
    static func copyBoxSerial<W: CopyWord>(
        _: W.Type, shape: [Int], from src: UnsafeRawPointer, strides srcStrides: [Int],
        to dst: UnsafeMutableRawPointer, strides dstStrides: [Int]
    ) {
        let size = MemoryLayout<W>.size
        StridedRowCursor.withCursor(shape: shape, strides: srcStrides, otherStrides: dstStrides) { cursor in
            let sStep = cursor.rowStride * size
            let dStep = cursor.otherRowStride * size
            repeat {
                copyRun(
                    W.self, from: src + cursor.offset * size, step: sStep, to: dst + cursor.otherOffset * size,
                    step: dStep, count: cursor.rowLength)
            } while cursor.nextRow()
        }
    }
}
