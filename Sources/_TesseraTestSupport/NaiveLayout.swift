import TesseraKernels

/// Deliberately simple index arithmetic for reference implementations: no collapsing, no
/// fast paths, just multi-indices walked in row-major order.
package enum NaiveLayout {
    /// Every multi-index of `shape` in row-major order (one empty index for rank 0, none when
    /// a dimension is 0).
    package static func indices(of shape: [Int]) -> [[Int]] {
        if shape.contains(0) { return [] }
        var result: [[Int]] = [[]]
        for size in shape {
            var next: [[Int]] = []
            next.reserveCapacity(result.count * size)
            for prefix in result {
                for i in 0..<size { next.append(prefix + [i]) }
            }
            result = next
        }
        return result
    }

    /// The element position of `index` under `layout`, relative to the base pointer.
    package static func position(of index: [Int], in layout: StridedLayout) -> Int {
        precondition(index.count == layout.rank, "index \(index) does not match layout \(layout)")
        var position = layout.offset
        for axis in 0..<index.count { position += index[axis] * layout.strides[axis] }
        return position
    }

    /// The row-major linear position of `index` in `shape`.
    package static func linear(_ index: [Int], in shape: [Int]) -> Int {
        var position = 0
        for axis in 0..<shape.count { position = position * shape[axis] + index[axis] }
        return position
    }

    /// Reads every element of a strided operand into a row-major array.
    package static func gather<T>(_ storage: [T], _ layout: StridedLayout) -> [T] {
        indices(of: layout.shape).map { storage[position(of: $0, in: layout)] }
    }
}

/// A test operand: backing storage plus a layout into it, made in one of the shapes of
/// memory kernels must handle.
package struct StridedStorage<T>: @unchecked Sendable {
    /// The backing elements (including padding that the layout skips).
    package var storage: [T]
    /// How the operand's elements sit in `storage`.
    package var layout: StridedLayout

    /// Storage and a layout inside it; traps if the layout reaches outside.
    package init(storage: [T], layout: StridedLayout) {
        if let range = layout.elementRange {
            precondition(range.lowerBound >= 0 && range.upperBound < storage.count, "layout outside storage")
        }
        self.storage = storage
        self.layout = layout
    }

    /// The elements in row-major order of `layout.shape`.
    package var logicalElements: [T] { NaiveLayout.gather(storage, layout) }
}

/// The kinds of memory layout the tests sweep.
package enum LayoutKind: String, CaseIterable, Sendable, CustomStringConvertible {
    /// Row-major, no gaps, offset 0.
    case contiguous
    /// A permutation (reversed axes) of a contiguous buffer.
    case transposed
    /// Every dimension padded (stride larger than needed), with an offset.
    case padded
    /// A reversed view: negative strides along the first axis.
    case reversed

    package var description: String { rawValue }

    /// Storage of `shape` laid out this way, filled by `fill` for every storage slot
    /// (padding included, so a kernel that reads padding gets a wrong answer).
    package func make<T>(shape: [Int], fill: (Int) -> T) -> StridedStorage<T> {
        switch self {
        case .contiguous:
            let count = shape.reduce(1, *)
            return StridedStorage(storage: (0..<count).map(fill), layout: StridedLayout(contiguous: shape))
        case .transposed:
            let reversedShape = Array(shape.reversed())
            let base = StridedLayout(contiguous: reversedShape)
            let count = shape.reduce(1, *)
            let permutation = Array((0..<shape.count).reversed())
            return StridedStorage(storage: (0..<count).map(fill), layout: base.permuted(permutation))
        case .padded:
            var strides = [Int](repeating: 1, count: shape.count)
            var running = 2
            for axis in stride(from: shape.count - 1, through: 0, by: -1) {
                strides[axis] = running
                running *= shape[axis] + 1
            }
            let offset = 3
            let count = offset + running + 1
            return StridedStorage(
                storage: (0..<count).map(fill), layout: StridedLayout(shape: shape, strides: strides, offset: offset))
        case .reversed:
            var layout = StridedLayout(contiguous: shape)
            let count = shape.reduce(1, *)
            if let first = shape.first, first > 1 {
                layout.offset = (first - 1) * layout.strides[0]
                layout.strides[0] = -layout.strides[0]
            }
            return StridedStorage(storage: (0..<count).map(fill), layout: layout)
        }
    }
}
