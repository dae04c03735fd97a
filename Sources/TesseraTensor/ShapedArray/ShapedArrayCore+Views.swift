import TesseraKernels

/// Views: new layouts over the same storage (slices, permutations, inserted axes), and
/// writes of one core's values into a region of another.
extension _ShapedArrayCore {
    /// The view with the leading `indices.count` axes fixed at `indices`.
    func fixingLeading<C: Collection>(_ indices: C, op: @autoclosure () -> String) -> _ShapedArrayCore
    where C.Element == Int {
        kernelPrecondition(
            indices.count <= rank,
            "[\(op())] \(indices.count) indices \(Array(indices)) for shape \(shape) (rank \(rank))")
        var offset = layout.offset
        var axis = 0
        for index in indices {
            kernelPrecondition(
                index >= 0 && index < layout.shape[axis],
                "[\(op())] index \(Array(indices)) is out of range for shape \(shape)")
            offset += index * layout.strides[axis]
            axis += 1
        }
        let sub = StridedLayout(
            shape: Array(layout.shape[axis...]), strides: Array(layout.strides[axis...]), offset: offset)
        return _ShapedArrayCore(storage: storage, layout: sub)
    }

    /// The view restricted to `ranges` on the leading axes (later axes are whole).
    func restricting(_ ranges: [Range<Int>], op: @autoclosure () -> String) -> _ShapedArrayCore {
        kernelPrecondition(
            ranges.count <= rank, "[\(op())] \(ranges.count) ranges \(ranges) for shape \(shape) (rank \(rank))")
        var sub = layout
        for (axis, range) in ranges.enumerated() {
            kernelPrecondition(
                range.lowerBound >= 0 && range.upperBound <= layout.shape[axis],
                "[\(op())] range \(range) is out of bounds for axis \(axis) of shape \(shape)")
            sub.shape[axis] = range.count
            if range.count > 0 { sub.offset += range.lowerBound * layout.strides[axis] }
        }
        return _ShapedArrayCore(storage: storage, layout: sub)
    }

    /// The view with axes reordered: result axis `i` is axis `permutation[i]`.
    func permuted(_ permutation: [Int], op: @autoclosure () -> String) -> _ShapedArrayCore {
        kernelPrecondition(
            permutation.count == rank && Set(permutation) == Set(0..<rank),
            "[\(op())] \(permutation) is not a permutation of the axes of shape \(shape)")
        return _ShapedArrayCore(storage: storage, layout: layout.permuted(permutation))
    }

    /// The same elements in row-major order with a new shape (a view when the layout is
    /// contiguous, otherwise a contiguous copy).
    func reshaped(to newShape: [Int], op: @autoclosure () -> String) -> _ShapedArrayCore {
        let count = _ShapedArrayCore.checkedCount(newShape, op: op())
        kernelPrecondition(
            count == scalarCount,
            "[\(op())] cannot reshape shape \(shape) (\(scalarCount) scalars) to \(newShape) (\(count) scalars)")
        let source = contiguous()
        let layout = StridedLayout(
            shape: newShape, strides: StridedLayout.contiguousStrides(for: newShape), offset: source.layout.offset)
        return _ShapedArrayCore(storage: source.storage, layout: layout)
    }

    /// The view with a new axis of size 1 at `axis` (in `-(rank + 1)...rank`).
    func expanding(at axis: Int, op: @autoclosure () -> String) -> _ShapedArrayCore {
        kernelPrecondition(
            axis >= -(rank + 1) && axis <= rank, "[\(op())] axis \(axis) is out of range for shape \(shape)")
        let axis = axis < 0 ? axis + rank + 1 : axis
        var sub = layout
        let stride = axis < rank ? layout.strides[axis] * Swift.max(layout.shape[axis], 1) : 1
        sub.shape.insert(1, at: axis)
        sub.strides.insert(stride, at: axis)
        return _ShapedArrayCore(storage: storage, layout: sub)
    }

    /// The view without its axes of size 1.
    func squeezed() -> _ShapedArrayCore {
        var sub = layout
        sub.shape = []
        sub.strides = []
        for axis in 0..<rank where layout.shape[axis] != 1 {
            sub.shape.append(layout.shape[axis])
            sub.strides.append(layout.strides[axis])
        }
        return _ShapedArrayCore(storage: storage, layout: sub)
    }

    /// Overwrites the elements selected by `region` (a view of this core's storage) with
    /// `values`, which must have `region`'s shape. Makes this core unique first.
    mutating func assign(
        _ values: _ShapedArrayCore, toRegion region: (_ShapedArrayCore) -> _ShapedArrayCore,
        op: @autoclosure () -> String
    ) {
        let targetShape = region(self).shape
        kernelPrecondition(
            values.shape == targetShape,
            "[\(op())] cannot assign a value of shape \(values.shape) to a region of shape \(targetShape)")
        // Read the values before making this core unique: if they share our storage, the
        // copy below keeps them intact.
        let source = values.scalars
        makeUnique()
        let destination = region(self)
        source.withUnsafeBufferPointer { buffer in
            if let address = buffer.baseAddress { destination.writeScalars(from: address) }
        }
    }
}
