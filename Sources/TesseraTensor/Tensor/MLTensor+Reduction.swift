import TesseraGraph
import TesseraKernels

extension MLTensor {
    /// `axes` counted from the front, sorted; traps on an axis outside `-rank..<rank` or a
    /// repeated axis, naming `op` (inside ``withShapeChecks(_:)``: records that and returns
    /// `nil`).
    package func normalizedAxes(_ axes: [Int], op: String) -> [Int]? {
        var normalized: [Int] = []
        normalized.reserveCapacity(axes.count)
        for axis in axes {
            guard let axis = normalizedAxis(axis, op: op) else { return nil }
            normalized.append(axis)
        }
        guard
            MLTensor.check(
                Set(normalized).count == normalized.count,
                "[\(op)] repeated axis in \(axes) for a tensor of shape \(shape)")
        else { return nil }
        return normalized.sorted()
    }

    /// The reduction `op` over `axes` (nil: every axis), dropping the reduced axes unless
    /// `keepRank`.
    ///
    /// The graph op keeps rank; dropping axes is a reshape, which is a free view.
    private func reduced(_ op: ReductionOp, axes requestedAxes: [Int]?, keepRank: Bool) -> MLTensor {
        let axes: [Int]
        if let requested = requestedAxes {
            guard let normalized = normalizedAxes(requested, op: "\(op)") else { return placeholder }
            axes = normalized
        } else {
            axes = Array(0..<rank)
        }
        let result = MLTensor(.reduce(op, axes: axes), [self])
        if keepRank { return result }
        let kept = shape.indices.filter { !axes.contains($0) }.map { shape[$0] }
        return MLTensor(.reshape(kept), [result])
    }
}

// MARK: - Sum, mean, product

extension MLTensor {
    /// Returns the sum of all elements.
    ///
    /// The result has shape `[]`, or all ones (`[1, 1]` for a matrix) with `keepRank`, and the
    /// tensor's scalar type (integer sums wrap). The sum of no elements is 0.
    ///
    /// ```swift
    /// MLTensor(shape: [2, 2], scalars: [1, 2, 3, 4]).sum()   // 10
    /// ```
    ///
    /// - Precondition: The scalar type is not `Bool`.
    public func sum(keepRank: Bool = false) -> MLTensor {
        reduced(.sum, axes: nil, keepRank: keepRank)
    }

    /// Returns the sum along the given axes.
    ///
    /// Negative axes count from the end. The reduced axes are removed (or kept with size 1
    /// with `keepRank`).
    ///
    /// ```swift
    /// let x = MLTensor(shape: [2, 3], scalars: [1, 2, 3, 4, 5, 6])
    /// x.sum(alongAxes: 1)                   // [6, 15], shape [2]
    /// x.sum(alongAxes: -1, keepRank: true)  // shape [2, 1]
    /// ```
    ///
    /// - Precondition: Every axis is in `-rank..<rank`, no axis repeats (after wrapping), and
    ///   the scalar type is not `Bool`.
    public func sum(alongAxes axes: Int..., keepRank: Bool = false) -> MLTensor {
        reduced(.sum, axes: axes, keepRank: keepRank)
    }

    /// Returns the sum along the given axes (array form of `sum(alongAxes:keepRank:)`).
    ///
    /// ```swift
    /// x.sum(alongAxes: [0, 1])   // shape []
    /// ```
    ///
    /// - Precondition: Every axis is in `-rank..<rank`, no axis repeats, not `Bool`.
    public func sum(alongAxes axes: [Int], keepRank: Bool = false) -> MLTensor {
        reduced(.sum, axes: axes, keepRank: keepRank)
    }

    /// Returns the arithmetic mean of all elements.
    ///
    /// Floating-point tensors keep their scalar type; integer tensors give a `Float` mean. The
    /// mean of no elements is NaN. Shape `[]`, or all ones with `keepRank`.
    ///
    /// ```swift
    /// MLTensor([1, 2, 3, 4] as [Float]).mean()   // 2.5
    /// ```
    ///
    /// - Precondition: The scalar type is not `Bool`.
    public func mean(keepRank: Bool = false) -> MLTensor {
        reduced(.mean, axes: nil, keepRank: keepRank)
    }

    /// Returns the mean along the given axes (negative axes count from the end).
    ///
    /// ```swift
    /// x.mean(alongAxes: 0)   // column means, shape [3]
    /// ```
    ///
    /// - Precondition: Every axis is in `-rank..<rank`, no axis repeats, not `Bool`.
    public func mean(alongAxes axes: Int..., keepRank: Bool = false) -> MLTensor {
        reduced(.mean, axes: axes, keepRank: keepRank)
    }

    /// Returns the mean along the given axes (array form).
    ///
    /// ```swift
    /// x.mean(alongAxes: [1], keepRank: true)   // shape [2, 1]
    /// ```
    ///
    /// - Precondition: Every axis is in `-rank..<rank`, no axis repeats, not `Bool`.
    public func mean(alongAxes axes: [Int], keepRank: Bool = false) -> MLTensor {
        reduced(.mean, axes: axes, keepRank: keepRank)
    }

    /// Returns the product of all elements (1 for no elements; integer products wrap).
    ///
    /// ```swift
    /// MLTensor([1, 2, 3, 4] as [Float]).product()   // 24
    /// ```
    ///
    /// - Precondition: The scalar type is not `Bool`.
    public func product(keepRank: Bool = false) -> MLTensor {
        reduced(.product, axes: nil, keepRank: keepRank)
    }

    /// Returns the product along the given axes (negative axes count from the end).
    ///
    /// ```swift
    /// x.product(alongAxes: 1)   // [6, 120]
    /// ```
    ///
    /// - Precondition: Every axis is in `-rank..<rank`, no axis repeats, not `Bool`.
    public func product(alongAxes axes: Int..., keepRank: Bool = false) -> MLTensor {
        reduced(.product, axes: axes, keepRank: keepRank)
    }

    /// Returns the product along the given axes (array form).
    ///
    /// ```swift
    /// x.product(alongAxes: [0])   // [4, 10, 18]
    /// ```
    ///
    /// - Precondition: Every axis is in `-rank..<rank`, no axis repeats, not `Bool`.
    public func product(alongAxes axes: [Int], keepRank: Bool = false) -> MLTensor {
        reduced(.product, axes: axes, keepRank: keepRank)
    }
}

// MARK: - Max, min

extension MLTensor {
    /// Returns the largest element (NaN if any element is NaN).
    ///
    /// Same scalar type; shape `[]`, or all ones with `keepRank`.
    ///
    /// ```swift
    /// MLTensor([3, 7, 1] as [Float]).max()   // 7
    /// ```
    ///
    /// - Precondition: The tensor is not empty.
    public func max(keepRank: Bool = false) -> MLTensor {
        reduced(.max, axes: nil, keepRank: keepRank)
    }

    /// Returns the largest elements along the given axes (negative axes count from the end).
    ///
    /// ```swift
    /// let x = MLTensor(shape: [3, 2], scalars: [1, 6, 5, 2, 3, 4])
    /// x.max(alongAxes: 0, keepRank: true)   // [[5, 6]], shape [1, 2]
    /// ```
    ///
    /// - Precondition: Every axis is in `-rank..<rank`, no axis repeats, and no reduced axis
    ///   has size 0.
    public func max(alongAxes axes: Int..., keepRank: Bool = false) -> MLTensor {
        reduced(.max, axes: axes, keepRank: keepRank)
    }

    /// Returns the largest elements along the given axes (array form).
    ///
    /// ```swift
    /// x.max(alongAxes: [1])   // [6, 5, 4]
    /// ```
    ///
    /// - Precondition: Every axis is in `-rank..<rank`, no axis repeats, no reduced axis is empty.
    public func max(alongAxes axes: [Int], keepRank: Bool = false) -> MLTensor {
        reduced(.max, axes: axes, keepRank: keepRank)
    }

    /// Returns the smallest element (NaN if any element is NaN).
    ///
    /// ```swift
    /// MLTensor([3, 7, 1] as [Float]).min()   // 1
    /// ```
    ///
    /// - Precondition: The tensor is not empty.
    public func min(keepRank: Bool = false) -> MLTensor {
        reduced(.min, axes: nil, keepRank: keepRank)
    }

    /// Returns the smallest elements along the given axes (negative axes count from the end).
    ///
    /// ```swift
    /// x.min(alongAxes: 0)   // [1, 2]
    /// ```
    ///
    /// - Precondition: Every axis is in `-rank..<rank`, no axis repeats, no reduced axis is empty.
    public func min(alongAxes axes: Int..., keepRank: Bool = false) -> MLTensor {
        reduced(.min, axes: axes, keepRank: keepRank)
    }

    /// Returns the smallest elements along the given axes (array form).
    ///
    /// ```swift
    /// x.min(alongAxes: [0, 1])   // 1, shape []
    /// ```
    ///
    /// - Precondition: Every axis is in `-rank..<rank`, no axis repeats, no reduced axis is empty.
    public func min(alongAxes axes: [Int], keepRank: Bool = false) -> MLTensor {
        reduced(.min, axes: axes, keepRank: keepRank)
    }
}

// MARK: - All, any

extension MLTensor {
    /// Returns whether every element is true (non-zero); `true` for an empty tensor.
    ///
    /// Meant for `Bool` tensors (numeric tensors count non-zero as true); the result is a
    /// `Bool` tensor of shape `[]`, or all ones with `keepRank`.
    ///
    /// ```swift
    /// (x .> 0).all()   // true when every element is positive
    /// ```
    public func all(keepRank: Bool = false) -> MLTensor {
        reduced(.all, axes: nil, keepRank: keepRank)
    }

    /// Returns whether every element along the given axes is true (`Bool` result).
    ///
    /// ```swift
    /// (x .> 0).all(alongAxes: 1)   // per row
    /// ```
    ///
    /// - Precondition: Every axis is in `-rank..<rank` and no axis repeats.
    public func all(alongAxes axes: Int..., keepRank: Bool = false) -> MLTensor {
        reduced(.all, axes: axes, keepRank: keepRank)
    }

    /// Returns whether every element along the given axes is true (array form).
    ///
    /// ```swift
    /// mask.all(alongAxes: [0], keepRank: true)
    /// ```
    ///
    /// - Precondition: Every axis is in `-rank..<rank` and no axis repeats.
    public func all(alongAxes axes: [Int], keepRank: Bool = false) -> MLTensor {
        reduced(.all, axes: axes, keepRank: keepRank)
    }

    /// Returns whether some element is true (non-zero); `false` for an empty tensor.
    ///
    /// Meant for `Bool` tensors; the result is a `Bool` tensor of shape `[]`, or all ones with
    /// `keepRank`.
    ///
    /// ```swift
    /// (x .!= x).any()   // true when x holds a NaN
    /// ```
    public func any(keepRank: Bool = false) -> MLTensor {
        reduced(.any, axes: nil, keepRank: keepRank)
    }

    /// Returns whether some element along the given axes is true (`Bool` result).
    ///
    /// ```swift
    /// (x .< 0).any(alongAxes: -1)
    /// ```
    ///
    /// - Precondition: Every axis is in `-rank..<rank` and no axis repeats.
    public func any(alongAxes axes: Int..., keepRank: Bool = false) -> MLTensor {
        reduced(.any, axes: axes, keepRank: keepRank)
    }

    /// Returns whether some element along the given axes is true (array form).
    ///
    /// ```swift
    /// mask.any(alongAxes: [0, 1])
    /// ```
    ///
    /// - Precondition: Every axis is in `-rank..<rank` and no axis repeats.
    public func any(alongAxes axes: [Int], keepRank: Bool = false) -> MLTensor {
        reduced(.any, axes: axes, keepRank: keepRank)
    }
}

// MARK: - Argmax, argmin

extension MLTensor {
    /// Returns the index of the largest element of the flattened tensor.
    ///
    /// An `Int32` tensor of shape `[]`; the first index wins ties, and the first NaN wins over
    /// everything.
    ///
    /// ```swift
    /// MLTensor(shape: [2, 2], scalars: [1, 9, 3, 4]).argmax()   // 1
    /// ```
    ///
    /// - Precondition: The tensor is not empty.
    public func argmax() -> MLTensor {
        flatIndex(.argmax)
    }

    /// Returns the indices of the largest elements along an axis.
    ///
    /// An `Int32` tensor: `[3, 2]` along axis 0 gives shape `[2]` (`[1, 2]` with `keepRank`).
    /// The first index wins ties.
    ///
    /// ```swift
    /// let x = MLTensor(shape: [3, 2], scalars: [1, 6, 5, 2, 3, 4])
    /// x.argmax(alongAxis: 0)   // [1, 0]
    /// ```
    ///
    /// - Precondition: `axis` is in `-rank..<rank` and that axis is not empty.
    public func argmax(alongAxis axis: Int, keepRank: Bool = false) -> MLTensor {
        reduced(.argmax, axes: [axis], keepRank: keepRank)
    }

    /// Returns the index of the smallest element of the flattened tensor (`Int32`, shape `[]`).
    ///
    /// ```swift
    /// MLTensor([4, 1, 1] as [Float]).argmin()   // 1
    /// ```
    ///
    /// - Precondition: The tensor is not empty.
    public func argmin() -> MLTensor {
        flatIndex(.argmin)
    }

    /// Returns the indices of the smallest elements along an axis (`Int32`).
    ///
    /// ```swift
    /// x.argmin(alongAxis: -1)   // [0, 1, 0]
    /// ```
    ///
    /// - Precondition: `axis` is in `-rank..<rank` and that axis is not empty.
    public func argmin(alongAxis axis: Int, keepRank: Bool = false) -> MLTensor {
        reduced(.argmin, axes: [axis], keepRank: keepRank)
    }

    private func flatIndex(_ op: ReductionOp) -> MLTensor {
        let flat = MLTensor(.reshape([scalarCount]), [self])
        return MLTensor(.reshape([]), [MLTensor(.reduce(op, axes: [0]), [flat])])
    }
}

// MARK: - Softmax and scans

extension MLTensor {
    /// Returns the softmax of the tensor along an axis.
    ///
    /// Computed as `exp(x - max(x)) / sum(exp(x - max(x)))` so large inputs do not overflow.
    /// The result has the tensor's shape and scalar type.
    ///
    /// ```swift
    /// let p = MLTensor([1.0, 2.0, 3.0] as [Float]).softmax()   // [0.090, 0.245, 0.665]
    /// ```
    ///
    /// - Parameter axis: The axis to normalise; negative values count from the end.
    /// - Precondition: `axis` is in `-rank..<rank` and the scalar type is a floating-point type.
    public func softmax(alongAxis axis: Int = -1) -> MLTensor {
        guard let axis = normalizedAxis(axis, op: "softmax") else { return placeholder }
        return MLTensor(.softmax(axis: axis), [self])
    }

    /// Returns the inclusive cumulative sum along an axis.
    ///
    /// Same shape and scalar type: element `i` is the sum of elements `0...i` along `axis`.
    ///
    /// ```swift
    /// MLTensor([1, 2, 3] as [Float]).cumulativeSum()   // [1, 3, 6]
    /// ```
    ///
    /// - Precondition: The rank is at least 1, `axis` is in `-rank..<rank`, and the scalar
    ///   type is not `Bool`.
    public func cumulativeSum(alongAxis axis: Int = 0) -> MLTensor {
        guard let axis = normalizedAxis(axis, op: "cumulativeSum") else { return placeholder }
        return MLTensor(.scan(product: false, axis: axis, exclusive: false, reverse: false), [self])
    }

    /// Returns the inclusive cumulative product along an axis.
    ///
    /// Same shape and scalar type: element `i` is the product of elements `0...i` along `axis`.
    ///
    /// ```swift
    /// MLTensor([1, 2, 3] as [Float]).cumulativeProduct()   // [1, 2, 6]
    /// ```
    ///
    /// - Precondition: The rank is at least 1, `axis` is in `-rank..<rank`, and the scalar
    ///   type is not `Bool`.
    public func cumulativeProduct(alongAxis axis: Int = 0) -> MLTensor {
        guard let axis = normalizedAxis(axis, op: "cumulativeProduct") else { return placeholder }
        return MLTensor(.scan(product: true, axis: axis, exclusive: false, reverse: false), [self])
    }
}
