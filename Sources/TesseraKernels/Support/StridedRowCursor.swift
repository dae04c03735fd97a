/// A row-by-row walk over a strided iteration space: the odometer over every dimension but the
/// last, with the element offset of one or two operands.
///
/// Every strided loop in the package is this walk: the cursor steps the outer dimensions and
/// hands the caller the innermost run (``rowLength`` elements, ``rowStride`` and
/// ``otherRowStride`` apart), which the caller moves with `memcpy`, a fill or a strided loop.
/// Strides may be negative (reversed axes) or 0 (broadcast). A rank-0 space is one row of one
/// element; a space with a dimension of size 0 has rows the caller must not visit (check
/// ``StridedLayout/count`` first, or use ``StridedLayout/forEachRow(_:)``).
///
/// The cursor is non-copyable and lives only inside ``withCursor(shape:strides:offset:otherStrides:otherOffset:row:_:)``,
/// which keeps its multi-index and the outer dimensions' sizes and strides in a temporary
/// allocation (on the stack), so a hot loop pays no allocation and touches no array.
///
/// ```swift
/// // Sum the elements of a transposed [2, 3] view.
/// var total: Float = 0
/// StridedRowCursor.withCursor(shape: [3, 2], strides: [1, 3]) { cursor in
///     repeat {
///         for j in 0..<cursor.rowLength { total += x[cursor.offset + j * cursor.rowStride] }
///     } while cursor.nextRow()
/// }
/// ```
@usableFromInline
package struct StridedRowCursor: ~Copyable {
    /// The outer dimensions, `outerRank` entries each, in `withCursor`'s temporary allocation:
    /// the multi-index, the sizes, the first operand's strides and the second's (zeros when
    /// there is none). The cursor holds no array: its hot loop reads plain memory (and
    /// ThreadSanitizer, which reports every access to a Swift array through a `mutating`
    /// method as a modifying access of the array, sees two threads' cursors over one plan's
    /// shape as two different memories).
    @usableFromInline let index: UnsafeMutablePointer<Int>
    @usableFromInline let sizes: UnsafePointer<Int>
    @usableFromInline let steps: UnsafePointer<Int>
    @usableFromInline let otherSteps: UnsafePointer<Int>
    /// The number of outer dimensions: `rank - 1`, 0 for rank 0 or 1.
    @usableFromInline let outerRank: Int
    /// Whether there is a second operand.
    @usableFromInline let hasOther: Bool
    /// The element offset of the current row's first element in the first operand.
    @usableFromInline package var offset: Int
    /// The same for the second operand (0 when there is none).
    @usableFromInline package var otherOffset: Int
    /// The number of elements in a row: the last dimension's size, 1 for rank 0.
    @usableFromInline package let rowLength: Int
    /// The first operand's stride along a row (1 for rank 0: one element is a contiguous row).
    @usableFromInline package let rowStride: Int
    /// The second operand's stride along a row (1 for rank 0, 0 when there is no second operand).
    @usableFromInline package let otherRowStride: Int

    /// A cursor at row `row` whose outer dimensions are in `scratch` (`4 × (rank - 1)` Ints).
    @inlinable
    init(
        shape: [Int], strides: [Int], offset: Int, otherStrides: [Int], otherOffset: Int, row: Int,
        scratch: UnsafeMutablePointer<Int>
    ) {
        let outer = Swift.max(shape.count - 1, 0)
        outerRank = outer
        hasOther = !otherStrides.isEmpty
        index = scratch
        let sizes = scratch + outer
        let steps = scratch + 2 * outer
        let otherSteps = scratch + 3 * outer
        self.sizes = UnsafePointer(sizes)
        self.steps = UnsafePointer(steps)
        self.otherSteps = UnsafePointer(otherSteps)
        rowLength = shape.last ?? 1
        rowStride = strides.last ?? 1
        otherRowStride = otherStrides.last ?? (shape.isEmpty ? 1 : 0)
        var position = offset
        var otherPosition = otherOffset
        var remaining = row
        for axis in stride(from: outer - 1, through: 0, by: -1) {
            let size = shape[axis]
            let i = remaining % size
            remaining /= size
            scratch[axis] = i
            sizes[axis] = size
            steps[axis] = strides[axis]
            otherSteps[axis] = hasOther ? otherStrides[axis] : 0
            position += i * strides[axis]
            otherPosition += i * otherSteps[axis]
        }
        self.offset = position
        self.otherOffset = otherPosition
    }

    /// Runs `body` with a cursor at row `row` (row-major over the outer dimensions) of the
    /// space `shape`, read with `strides` from `offset`, and optionally a second operand.
    ///
    /// - Parameters:
    ///   - shape: The iteration shape; no dimension may be 0 when `body` reads a row.
    ///   - strides: The first operand's strides over `shape`, in elements.
    ///   - offset: The first operand's element offset of position `[0, …]`.
    ///   - otherStrides: The second operand's strides over `shape`, or `[]` for none.
    ///   - otherOffset: The second operand's offset of position `[0, …]`.
    ///   - row: The starting row, in `0..<(count / rowLength)`.
    /// - Precondition: the stride arrays have `shape.count` entries (or `otherStrides` is empty).
    @inlinable
    package static func withCursor<R>(
        shape: [Int], strides: [Int], offset: Int = 0, otherStrides: [Int] = [], otherOffset: Int = 0,
        row: Int = 0, _ body: (inout StridedRowCursor) throws -> R
    ) rethrows -> R {
        kernelPrecondition(
            strides.count == shape.count && (otherStrides.isEmpty || otherStrides.count == shape.count),
            "[strided] strides \(strides) and \(otherStrides) do not match shape \(shape)")
        let outer = Swift.max(shape.count - 1, 0)
        return try withUnsafeTemporaryAllocation(of: Int.self, capacity: Swift.max(4 * outer, 1)) { buffer in
            var cursor = StridedRowCursor(
                shape: shape, strides: strides, offset: offset, otherStrides: otherStrides, otherOffset: otherOffset,
                row: row, scratch: buffer.baseAddress!)
            return try body(&cursor)
        }
    }

    /// Moves to the next row; returns `false` (and wraps to row 0) after the last one.
    @inlinable @inline(__always)
    package mutating func nextRow() -> Bool {
        var axis = outerRank - 1
        while axis >= 0 {
            index[axis] += 1
            offset += steps[axis]
            if hasOther { otherOffset += otherSteps[axis] }
            if index[axis] < sizes[axis] { return true }
            offset -= steps[axis] * sizes[axis]
            if hasOther { otherOffset -= otherSteps[axis] * sizes[axis] }
            index[axis] = 0
            axis -= 1
        }
        return false
    }
}

extension StridedLayout {
    /// Calls `body` once per innermost row, in row-major order, with the row's row-major
    /// position, its element offset (``offset`` included), its length and its stride.
    ///
    /// A rank-0 layout is one row of length 1; a layout with no elements calls nothing.
    ///
    /// ```swift
    /// StridedLayout(shape: [2, 3], strides: [1, 2]).forEachRow { linear, offset, length, stride in
    ///     // (0, 0, 3, 2), then (3, 1, 3, 2)
    /// }
    /// ```
    @inlinable
    package func forEachRow(_ body: (_ linear: Int, _ offset: Int, _ length: Int, _ stride: Int) throws -> Void)
        rethrows
    {
        if count == 0 { return }
        try StridedRowCursor.withCursor(shape: shape, strides: strides, offset: offset) { cursor in
            var linear = 0
            repeat {
                try body(linear, cursor.offset, cursor.rowLength, cursor.rowStride)
                linear += cursor.rowLength
            } while cursor.nextRow()
        }
    }

    /// The element offsets (``offset`` included) of the first `limit` positions, in row-major
    /// order (all of them by default).
    ///
    /// ```swift
    /// StridedLayout(shape: [2, 2], strides: [1, 2], offset: 1).elementOffsets()   // [1, 3, 2, 4]
    /// ```
    @inlinable
    package func elementOffsets(limit: Int = .max) -> [Int] {
        let total = Swift.min(count, limit)
        var result: [Int] = []
        if total == 0 { return result }
        result.reserveCapacity(total)
        StridedRowCursor.withCursor(shape: shape, strides: strides, offset: offset) { cursor in
            repeat {
                for j in 0..<Swift.min(cursor.rowLength, total - result.count) {
                    result.append(cursor.offset + j * cursor.rowStride)
                }
            } while result.count < total && cursor.nextRow()
        }
        return result
    }
}
