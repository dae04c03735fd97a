/// How an operand's elements sit in memory: a shape, a stride per dimension (in elements,
/// not bytes) and an offset from the base pointer.
///
/// Broadcast dimensions have stride 0; transposes and permutations are a reordering of
/// strides; slices move the offset. Kernels read operands through a layout and write their
/// results contiguously in row-major order.
///
/// ```swift
/// let m = StridedLayout(contiguous: [2, 3])          // strides [3, 1]
/// let t = m.permuted([1, 0])                        // shape [3, 2], strides [1, 3]
/// let row = StridedLayout(contiguous: [3]).broadcast(to: [4, 3])   // strides [0, 1]
/// ```
@usableFromInline package struct StridedLayout: Sendable, Hashable, CustomStringConvertible {
    /// The size of each dimension; empty for a rank-0 (scalar) operand.
    @usableFromInline package var shape: [Int]
    /// The distance in elements between neighbours along each dimension.
    @usableFromInline package var strides: [Int]
    /// The position of element `[0, 0, …]` relative to the base pointer, in elements.
    @usableFromInline package var offset: Int

    /// A layout with explicit strides.
    ///
    /// - Precondition: `shape` and `strides` have the same count and no dimension is negative.
    @inlinable
    package init(shape: [Int], strides: [Int], offset: Int = 0) {
        kernelPrecondition(
            shape.count == strides.count,
            "[StridedLayout] shape \(shape) and strides \(strides) differ in rank")
        kernelPrecondition(shape.allSatisfy { $0 >= 0 }, "[StridedLayout] negative dimension in shape \(shape)")
        self.shape = shape
        self.strides = strides
        self.offset = offset
    }

    /// The row-major (C order) layout of `shape`.
    @inlinable
    package init(contiguous shape: [Int]) {
        self.init(shape: shape, strides: StridedLayout.contiguousStrides(for: shape))
    }

    /// Row-major strides for `shape`: the last dimension has stride 1.
    ///
    /// Rank 0 and rank 1 share one array each (small-tensor code makes many such layouts).
    @inlinable
    package static func contiguousStrides(for shape: [Int]) -> [Int] {
        if shape.count <= 1 { return shape.isEmpty ? [] : unitStrides }
        var strides = [Int](repeating: 1, count: shape.count)
        var running = 1
        for axis in stride(from: shape.count - 1, through: 0, by: -1) {
            strides[axis] = running
            running *= Swift.max(shape[axis], 1)
        }
        return strides
    }

    /// `[1]`, shared by every rank-1 contiguous layout.
    @usableFromInline static let unitStrides = [1]

    /// The number of dimensions.
    @inlinable package var rank: Int { shape.count }

    /// The number of elements (1 for rank 0, 0 when any dimension is 0).
    @inlinable package var count: Int { shape.reduce(1, *) }

    /// Whether the elements are exactly row-major from `offset` on, with no gaps.
    ///
    /// Dimensions of size 1 may have any stride.
    @inlinable
    package var isContiguous: Bool {
        var expected = 1
        for axis in stride(from: rank - 1, through: 0, by: -1) where shape[axis] != 1 {
            if strides[axis] != expected { return false }
            expected *= shape[axis]
        }
        return true
    }

    /// The smallest and largest element positions (relative to the base pointer) the layout
    /// touches, or `nil` when it has no elements. Use it to check that a layout stays inside
    /// a buffer before handing it to a kernel.
    @inlinable
    package var elementRange: ClosedRange<Int>? {
        if count == 0 { return nil }
        var low = offset
        var high = offset
        for axis in 0..<rank {
            let reach = strides[axis] * (shape[axis] - 1)
            if reach < 0 { low += reach } else { high += reach }
        }
        return low...high
    }

    /// The same elements read as `target` in row-major order without moving them, or `nil`
    /// when no strides can say it (NumPy's no-copy reshape).
    ///
    /// The axes of size other than 1 fall into runs whose sizes multiply to the same products
    /// in both shapes; each run of this layout's axes must be nested (an axis's stride is the
    /// next one's stride times its size), and the matching run of `target` then gets row-major
    /// strides from the run's last stride. A contiguous layout always reshapes; so does one that
    /// only gains or loses axes of size 1, whatever its strides (the query heads sliced out of
    /// a fused q/k/v projection). Broadcast axes (stride 0) nest with each other.
    ///
    /// ```swift
    /// // The query of a [1, 1500, 3 · 6 · 64] projection, read as [3, 1, 6, 1500, 64] and sliced:
    /// let query = StridedLayout(shape: [1, 1, 6, 1500, 64], strides: [384, 1_728_000, 64, 1152, 1])
    /// query.reshaped(to: [1, 6, 1500, 64])?.strides   // [384, 64, 1152, 1]: no copy
    /// StridedLayout(contiguous: [2, 3]).permuted([1, 0]).reshaped(to: [6])   // nil: needs a copy
    /// ```
    ///
    /// - Returns: `nil` also when `target` holds a different number of elements.
    @inlinable
    package func reshaped(to target: [Int]) -> StridedLayout? {
        let total = count
        guard target.allSatisfy({ $0 >= 0 }), target.reduce(1, *) == total else { return nil }
        if total == 0 || isContiguous {
            var layout = StridedLayout(contiguous: target)
            layout.offset = offset
            return layout
        }
        var oldShape: [Int] = []
        var oldStrides: [Int] = []
        for axis in 0..<rank where shape[axis] != 1 {
            oldShape.append(shape[axis])
            oldStrides.append(strides[axis])
        }
        var newStrides = [Int](repeating: 1, count: target.count)
        var (oi, oj, ni, nj) = (0, 1, 0, 1)
        while ni < target.count && oi < oldShape.count {
            var newProduct = target[ni]
            var oldProduct = oldShape[oi]
            while newProduct != oldProduct {
                if newProduct < oldProduct {
                    newProduct *= target[nj]
                    nj += 1
                } else {
                    oldProduct *= oldShape[oj]
                    oj += 1
                }
            }
            for axis in oi..<(oj - 1) where oldStrides[axis] != oldShape[axis + 1] * oldStrides[axis + 1] {
                return nil
            }
            newStrides[nj - 1] = oldStrides[oj - 1]
            var axis = nj - 1
            while axis > ni {
                newStrides[axis - 1] = newStrides[axis] * target[axis]
                axis -= 1
            }
            (ni, nj, oi, oj) = (nj, nj + 1, oj, oj + 1)
        }
        return StridedLayout(shape: target, strides: newStrides, offset: offset)
    }

    /// The layout with dimensions reordered: result dimension `i` is this layout's
    /// dimension `permutation[i]`.
    ///
    /// - Precondition: `permutation` is a permutation of `0..<rank`.
    @inlinable
    package func permuted(_ permutation: [Int]) -> StridedLayout {
        kernelPrecondition(
            permutation.count == rank && Set(permutation) == Set(0..<rank),
            "[permute] \(permutation) is not a permutation of the axes of shape \(shape)")
        return StridedLayout(
            shape: permutation.map { shape[$0] }, strides: permutation.map { strides[$0] }, offset: offset)
    }

    /// The layout read as `target` under NumPy broadcasting: missing leading dimensions and
    /// dimensions of size 1 get stride 0.
    ///
    /// - Precondition: the shapes are broadcast-compatible (each dimension equal, or 1 here).
    @inlinable
    package func broadcast(to target: [Int]) -> StridedLayout {
        kernelPrecondition(
            target.count >= rank, "[broadcast] cannot broadcast shape \(shape) to lower-rank shape \(target)")
        let lead = target.count - rank
        var newStrides = [Int](repeating: 0, count: target.count)
        for axis in 0..<rank {
            let size = shape[axis]
            let want = target[lead + axis]
            if size == want {
                newStrides[lead + axis] = size == 1 ? 0 : strides[axis]
            } else {
                kernelPrecondition(size == 1, "[broadcast] cannot broadcast shape \(shape) to \(target)")
            }
        }
        return StridedLayout(shape: target, strides: newStrides, offset: offset)
    }

    /// The NumPy broadcast of two shapes, or `nil` when they are incompatible.
    @inlinable
    package static func broadcastShape(_ a: [Int], _ b: [Int]) -> [Int]? {
        let rank = Swift.max(a.count, b.count)
        var result = [Int](repeating: 1, count: rank)
        for i in 0..<rank {
            let x = i < rank - a.count ? 1 : a[i - (rank - a.count)]
            let y = i < rank - b.count ? 1 : b[i - (rank - b.count)]
            if x == y || y == 1 {
                result[i] = x
            } else if x == 1 {
                result[i] = y
            } else {
                return nil
            }
        }
        return result
    }

    @usableFromInline package var description: String {
        offset == 0 ? "\(shape) strides \(strides)" : "\(shape) strides \(strides) offset \(offset)"
    }
}

/// Several operands' strides over one shared iteration shape, with dimensions merged where
/// every operand allows it.
///
/// Two neighbouring dimensions `i, i+1` merge when, for every operand,
/// `stride[i] == stride[i+1] * shape[i+1]`; dimensions of size 1 drop out. A contiguous
/// `[8, 3, 224, 224]` buffer added to a `[1, 3, 1, 1]` broadcast collapses to
/// `[8, 3, 50176]` with strides `[150528, 50176, 1]` and `[0, 1, 0]`, so the inner loop runs
/// 50176 elements at a time.
///
/// ```swift
/// let c = CollapsedLayouts(shape: [4, 5, 6], strides: [[30, 6, 1], [30, 6, 1]])
/// c.shape      // [120]
/// c.strides    // [[1], [1]]
/// ```
@usableFromInline package struct CollapsedLayouts: Sendable, Hashable {
    /// The merged iteration shape (never contains 1s unless it is `[1]` for a scalar).
    @usableFromInline package var shape: [Int]
    /// For each operand, its strides over `shape`.
    @usableFromInline package var strides: [[Int]]

    /// Merges the dimensions of `shape` as far as every operand's `strides` allow.
    @inlinable
    package init(shape: [Int], strides operandStrides: [[Int]]) {
        for s in operandStrides {
            kernelPrecondition(s.count == shape.count, "[collapse] strides \(s) do not match shape \(shape)")
        }
        var outShape: [Int] = []
        var outStrides: [[Int]] = Array(repeating: [], count: operandStrides.count)
        outShape.reserveCapacity(shape.count)
        for axis in 0..<shape.count where shape[axis] != 1 {
            let size = shape[axis]
            if let last = outShape.indices.last {
                var mergeable = true
                for k in 0..<operandStrides.count
                where outStrides[k][last] != operandStrides[k][axis] * size {
                    mergeable = false
                    break
                }
                if mergeable {
                    outShape[last] *= size
                    for k in 0..<operandStrides.count { outStrides[k][last] = operandStrides[k][axis] }
                    continue
                }
            }
            outShape.append(size)
            for k in 0..<operandStrides.count { outStrides[k].append(operandStrides[k][axis]) }
        }
        if outShape.isEmpty {
            outShape = [1]
            for k in 0..<operandStrides.count { outStrides[k] = [0] }
        }
        self.shape = outShape
        self.strides = outStrides
    }

    /// The number of elements in the iteration space.
    @inlinable package var count: Int { shape.reduce(1, *) }
}
