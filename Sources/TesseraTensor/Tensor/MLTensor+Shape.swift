import TesseraGraph
import TesseraKernels

extension MLTensor {
    /// Returns the tensor with a new shape and the same elements in row-major order.
    ///
    /// A view: no data moves unless the tensor is a non-contiguous view itself.
    ///
    /// ```swift
    /// MLTensor([1, 2, 3, 4, 5, 6] as [Float]).reshaped(to: [2, 3])
    /// ```
    ///
    /// - Precondition: `newShape` has no negative dimension (`-1` is not inferred) and its
    ///   product equals `scalarCount`.
    public func reshaped(to newShape: [Int]) -> MLTensor {
        MLTensor(.reshape(newShape), [self])
    }

    /// Returns the elements as a one-dimensional tensor of `scalarCount` elements.
    ///
    /// ```swift
    /// MLTensor(zeros: [2, 3], scalarType: Float.self).flattened().shape   // [6]
    /// ```
    public func flattened() -> MLTensor {
        MLTensor(.reshape([scalarCount]), [self])
    }

    /// Returns the tensor with size-1 dimensions inserted at the given axes.
    ///
    /// Axes are positions in the result (rank `rank + axes.count`); negative axes count from
    /// its end, as NumPy's `expand_dims`: `[2]` at 0 → `[1, 2]`, at -1 → `[2, 1]`.
    ///
    /// ```swift
    /// MLTensor(zeros: [2, 3], scalarType: Float.self).expandingShape(at: 0, 2).shape   // [1, 2, 1, 3]
    /// ```
    ///
    /// - Precondition: Every axis is in `-r..<r` for the result rank `r`, and no axis repeats.
    public func expandingShape(at axes: Int...) -> MLTensor {
        expandingShape(at: axes)
    }

    /// Returns the tensor with size-1 dimensions inserted at the given axes (array form).
    ///
    /// ```swift
    /// MLTensor([1, 2] as [Float]).expandingShape(at: [-1]).shape   // [2, 1]
    /// ```
    ///
    /// - Precondition: Every axis is in `-r..<r` for the result rank `r`, and no axis repeats.
    public func expandingShape(at axes: [Int]) -> MLTensor {
        let resultRank = rank + axes.count
        var inserted: [Int] = []
        for axis in axes {
            guard
                MLTensor.check(
                    axis >= -resultRank && axis < resultRank,
                    "[expandingShape] axis \(axis) is out of range for a tensor of shape \(shape) expanded by \(axes.count)"
                )
            else { return placeholder }
            inserted.append(axis < 0 ? axis + resultRank : axis)
        }
        guard
            MLTensor.check(
                Set(inserted).count == inserted.count, "[expandingShape] repeated axis in \(axes) for shape \(shape)")
        else { return placeholder }
        var remaining = shape[...]
        let newShape = (0..<resultRank).map { inserted.contains($0) ? 1 : remaining.popFirst()! }
        return MLTensor(.reshape(newShape), [self])
    }

    /// Returns the tensor with every size-1 dimension removed.
    ///
    /// ```swift
    /// MLTensor(zeros: [1, 2, 1], scalarType: Float.self).squeezingShape().shape   // [2]
    /// ```
    public func squeezingShape() -> MLTensor {
        MLTensor(.reshape(shape.filter { $0 != 1 }), [self])
    }

    /// Returns the tensor with the given size-1 dimensions removed.
    ///
    /// ```swift
    /// MLTensor(zeros: [1, 2, 1], scalarType: Float.self).squeezingShape(at: 0).shape   // [2, 1]
    /// ```
    ///
    /// - Precondition: Every axis is in `-rank..<rank`, no axis repeats, and every given
    ///   dimension has size 1.
    public func squeezingShape(at axes: Int...) -> MLTensor {
        squeezingShape(at: axes)
    }

    /// Returns the tensor with the given size-1 dimensions removed (array form).
    ///
    /// ```swift
    /// MLTensor(zeros: [1, 2, 1], scalarType: Float.self).squeezingShape(at: [0, -1]).shape   // [2]
    /// ```
    ///
    /// - Precondition: Every axis is in `-rank..<rank`, no axis repeats, and every given
    ///   dimension has size 1.
    public func squeezingShape(at axes: [Int]) -> MLTensor {
        guard let removed = normalizedAxes(axes, op: "squeezingShape") else { return placeholder }
        for axis in removed {
            guard
                MLTensor.check(
                    shape[axis] == 1,
                    "[squeezingShape] axis \(axis) has size \(shape[axis]), not 1, in shape \(shape)")
            else { return placeholder }
        }
        return MLTensor(.reshape(shape.indices.filter { !removed.contains($0) }.map { shape[$0] }), [self])
    }

    /// Returns the tensor with its dimensions in reverse order (a view).
    ///
    /// ```swift
    /// MLTensor(zeros: [2, 3, 4], scalarType: Float.self).transposed().shape   // [4, 3, 2]
    /// ```
    public func transposed() -> MLTensor {
        MLTensor(.permute(Array((0..<rank).reversed())), [self])
    }

    /// Returns the tensor with its dimensions permuted (a view).
    ///
    /// Result dimension `i` is dimension `permutation[i]` of this tensor; negative entries
    /// count from the end.
    ///
    /// ```swift
    /// MLTensor(zeros: [1, 2, 3], scalarType: Float.self).transposed(permutation: [1, 0, 2]).shape   // [2, 1, 3]
    /// ```
    ///
    /// - Precondition: `permutation` names every axis exactly once.
    public func transposed(permutation: [Int]) -> MLTensor {
        let permutation = permutation.map { $0 < 0 ? $0 + rank : $0 }
        return MLTensor(.permute(permutation), [self])
    }

    /// Returns the tensor with its dimensions permuted (variadic form).
    ///
    /// ```swift
    /// x.transposed(permutation: 0, 2, 1)   // swap the last two axes
    /// ```
    ///
    /// - Precondition: `permutation` names every axis exactly once.
    public func transposed(permutation: Int...) -> MLTensor {
        transposed(permutation: permutation)
    }

    /// Returns this tensor and `other` joined along an axis.
    ///
    /// ```swift
    /// let a = MLTensor(zeros: [2, 3], scalarType: Float.self)
    /// a.concatenated(with: a, alongAxis: 1).shape   // [2, 6]
    /// ```
    ///
    /// - Precondition: Same rank and scalar type; every dimension but `axis` is equal; `axis`
    ///   is in `-rank..<rank`.
    public func concatenated(with other: MLTensor, alongAxis axis: Int = 0) -> MLTensor {
        MLTensor(concatenating: [self, other], alongAxis: axis)
    }

    /// Returns the tensor repeated along each dimension.
    ///
    /// Result dimension `i` is `shape[i] * multiples[i]`. With fewer multiples than
    /// dimensions, ones are prepended to `multiples`; with more, the tensor is treated as if
    /// reshaped with leading size-1 dimensions (as NumPy's `tile`).
    ///
    /// ```swift
    /// MLTensor([1, 2] as [Float]).tiled(multiples: [2, 2])   // [[1, 2, 1, 2], [1, 2, 1, 2]]
    /// ```
    ///
    /// - Precondition: Every multiple is positive.
    public func tiled(multiples: [Int]) -> MLTensor {
        guard
            MLTensor.check(
                multiples.allSatisfy { $0 > 0 }, "[tiled] multiples \(multiples) must be positive (shape \(shape))")
        else { return placeholder }
        let resultRank = Swift.max(rank, multiples.count)
        let padded = Array(repeating: 1, count: resultRank - multiples.count) + multiples
        let source = rank < resultRank ? reshaped(to: Array(repeating: 1, count: resultRank - rank) + shape) : self
        return MLTensor(.tile(padded), [source])
    }

    /// Returns the tensor with the order of elements reversed along the given axes (a view).
    ///
    /// ```swift
    /// MLTensor([1, 2, 3] as [Float]).reversed(alongAxes: 0)   // [3, 2, 1]
    /// ```
    ///
    /// - Precondition: Every axis is in `-rank..<rank` and no axis repeats.
    public func reversed(alongAxes axes: Int...) -> MLTensor {
        reversed(alongAxes: axes)
    }

    /// Returns the tensor with the order of elements reversed along the given axes (array form).
    ///
    /// ```swift
    /// x.reversed(alongAxes: [0, -1])   // both ends of a matrix flipped
    /// ```
    ///
    /// - Precondition: Every axis is in `-rank..<rank` and no axis repeats.
    public func reversed(alongAxes axes: [Int]) -> MLTensor {
        guard let flipped = normalizedAxes(axes, op: "reversed") else { return placeholder }
        let starts = shape.indices.map { flipped.contains($0) ? Swift.max(shape[$0] - 1, 0) : 0 }
        let steps = shape.indices.map { flipped.contains($0) ? -1 : 1 }
        return MLTensor(.slice(starts: starts, steps: steps, counts: shape), [self])
    }
}
