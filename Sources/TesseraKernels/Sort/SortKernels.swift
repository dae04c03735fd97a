import CTesseraSIMD

/// Sorting along an axis: `argsort` and the `k` first positions of the order (top-k).
///
/// The order is total and deterministic: NaN sorts above every number (as in PyTorch and
/// NumPy), and equal values keep their original order (lower index first) in both
/// directions, so `argsort` is a stable sort and `topK` prefers the earlier of tied elements.
package enum SortKernels {
    /// Writes the indices that sort each line along `axis`, or only the first `count` of them.
    ///
    /// The output is contiguous, with the input's shape except that `axis` has `count`
    /// elements: `out[o, j, i]` is the index along `axis` of the `j`-th element of line
    /// `(o, i)` in ascending (or descending) order. With `count` well below the axis size a
    /// bounded heap selects the elements in one pass instead of sorting the line.
    ///
    /// ```swift
    /// // [1, 3, 2] ascending -> [0, 2, 1]; descending, count 2 -> [1, 2]
    /// SortKernels.argsort(input: x, layout: StridedLayout(contiguous: [3]), type: .float32,
    ///                     axis: 0, descending: true, count: 2, output: out)
    /// ```
    ///
    /// - Parameters:
    ///   - input: The base pointer of the operand.
    ///   - layout: The operand's layout (any strides); rank at least 1.
    ///   - type: The element type.
    ///   - axis: The non-negative axis to sort along.
    ///   - descending: Largest first when true.
    ///   - count: How many positions of the order to write, in `0...shape[axis]`.
    ///   - output: `count * (elements per axis line)` contiguous `Int32`s.
    /// - Precondition: `axis` is in range, `count` is in `0...shape[axis]`, and the axis has at
    ///   most `Int32.max` elements.
    package static func argsort(
        input: UnsafeRawPointer, layout: StridedLayout, type: KernelScalarType, axis: Int, descending: Bool,
        count: Int, output: UnsafeMutablePointer<Int32>
    ) {
        kernelPrecondition(
            axis >= 0 && axis < layout.rank, "[argsort] axis \(axis) is out of range for shape \(layout.shape)")
        let n = layout.shape[axis]
        kernelPrecondition(
            count >= 0 && count <= n,
            "[topK] k = \(count) is outside 0...\(n) for axis \(axis) of shape \(layout.shape)")
        kernelPrecondition(n <= Int(Int32.max), "[argsort] axis \(axis) of shape \(layout.shape) is too long")
        switch type {
        case .float32: run(Float.self, input, layout, axis, descending, count, output)
        case .float16: run(Float16.self, input, layout, axis, descending, count, output)
        case .float64: run(Double.self, input, layout, axis, descending, count, output)
        case .int32: run(Int32.self, input, layout, axis, descending, count, output)
        case .int16: run(Int16.self, input, layout, axis, descending, count, output)
        case .int8: run(Int8.self, input, layout, axis, descending, count, output)
        case .uint32: run(UInt32.self, input, layout, axis, descending, count, output)
        case .uint16: run(UInt16.self, input, layout, axis, descending, count, output)
        case .uint8, .bool: run(UInt8.self, input, layout, axis, descending, count, output)
        }
    }

    private static func run<T: SortableScalar>(
        _: T.Type, _ input: UnsafeRawPointer, _ layout: StridedLayout, _ axis: Int, _ descending: Bool, _ k: Int,
        _ output: UnsafeMutablePointer<Int32>
    ) {
        let n = layout.shape[axis]
        // Lines are the positions of every axis but `axis`, in row-major order.
        var lineShape = layout.shape
        lineShape.remove(at: axis)
        var lineStrides = layout.strides
        lineStrides.remove(at: axis)
        let lineCount = lineShape.reduce(1, *)
        let inner = layout.shape[(axis + 1)...].reduce(1, *)
        if lineCount == 0 || k == 0 { return }
        let axisStride = layout.strides[axis]
        let base = input.assumingMemoryBound(to: T.self) + layout.offset
        let useHeap = k * 16 <= n
        let cost = ParallelCost(nanosecondsPerItem: Double(n) * (useHeap ? 1.5 : 20))
        parallelFor(count: lineCount, cost: cost) { range in
            let values = UnsafeMutablePointer<T>.allocate(capacity: n)
            let order = UnsafeMutablePointer<Int32>.allocate(capacity: n)
            defer {
                values.deallocate()
                order.deallocate()
            }
            var position = [Int](repeating: 0, count: lineShape.count)
            for line in range {
                var rest = line
                var offset = 0
                for d in stride(from: lineShape.count - 1, through: 0, by: -1) {
                    position[d] = rest % lineShape[d]
                    rest /= lineShape[d]
                    offset += position[d] * lineStrides[d]
                }
                let source = base + offset
                // A contiguous line is read where it is; a strided one is gathered first.
                let lineValues: UnsafePointer<T>
                if axisStride == 1 {
                    lineValues = source
                } else {
                    for j in 0..<n { values[j] = source[j * axisStride] }
                    lineValues = UnsafePointer(values)
                }
                if useHeap {
                    select(lineValues, n, k, descending, order)
                } else {
                    let values = lineValues
                    for j in 0..<n { order[j] = Int32(j) }
                    var buffer = UnsafeMutableBufferPointer(start: order, count: n)
                    if descending {
                        buffer.sort { a, b in ranksBefore(values[Int(a)], a, values[Int(b)], b, descending: true) }
                    } else {
                        buffer.sort { a, b in ranksBefore(values[Int(a)], a, values[Int(b)], b, descending: false) }
                    }
                }
                // out[outer, j, inner]
                let outer = line / inner
                let innerIndex = line % inner
                let destination = output + outer * k * inner + innerIndex
                for j in 0..<k { destination[j * inner] = order[j] }
            }
        }
    }

    /// Whether `(a, ia)` comes before `(b, ib)` in the order.
    @inline(__always)
    static func ranksBefore<T: SortableScalar>(_ a: T, _ ia: Int32, _ b: T, _ ib: Int32, descending: Bool) -> Bool {
        if descending {
            if T.sortsBelow(b, a) { return true }
            if T.sortsBelow(a, b) { return false }
        } else {
            if T.sortsBelow(a, b) { return true }
            if T.sortsBelow(b, a) { return false }
        }
        return ia < ib
    }

    /// The first `k` positions of the order of `values[0..<n]` into `order[0..<k]`, through a
    /// heap whose root is the last-ranked element kept so far.
    private static func select<T: SortableScalar>(
        _ values: UnsafePointer<T>, _ n: Int, _ k: Int, _ descending: Bool, _ order: UnsafeMutablePointer<Int32>
    ) {
        let heap = order
        // `after(x, y)`: x ranks after y, so the heap is a max-heap in "rank".
        @inline(__always) func after(_ x: Int32, _ y: Int32) -> Bool {
            ranksBefore(values[Int(y)], y, values[Int(x)], x, descending: descending)
        }
        func siftDown(_ start: Int, _ size: Int) {
            var i = start
            while true {
                let l = 2 * i + 1
                if l >= size { return }
                var worst = l
                if l + 1 < size && after(heap[l + 1], heap[l]) { worst = l + 1 }
                if !after(heap[worst], heap[i]) { return }
                (heap[i], heap[worst]) = (heap[worst], heap[i])
                i = worst
            }
        }
        for j in 0..<k { heap[j] = Int32(j) }
        for i in stride(from: k / 2 - 1, through: 0, by: -1) { siftDown(i, k) }
        // A later element enters only if it ranks strictly before the root; a tie with the
        // root ranks after it (higher index), so ties keep the earlier element.
        var j = k
        if T.self == Float.self && SIMDMath.hasAVX2FMA {
            // Most elements lose to the root: jump to the next one that beats it (descending:
            // a value above the root, or a NaN; ascending: a value below it). Once the root is
            // NaN the plain loop below takes over.
            let floats = UnsafeRawPointer(values).assumingMemoryBound(to: Float.self)
            while j < n {
                let root = floats[Int(heap[0])]
                if root.isNaN { break }
                j = tessera_find_beyond_f32_avx2(descending ? 1 : 0, floats, j, n, root)
                if j == n { break }
                heap[0] = Int32(j)
                siftDown(0, k)
                j += 1
            }
        }
        while j < n {
            let root = values[Int(heap[0])]
            if descending ? T.sortsBelow(root, values[j]) : T.sortsBelow(values[j], root) {
                heap[0] = Int32(j)
                siftDown(0, k)
            }
            j += 1
        }
        var kept = UnsafeMutableBufferPointer(start: heap, count: k)
        kept.sort { a, b in
            ranksBefore(values[Int(a)], a, values[Int(b)], b, descending: descending)
        }
    }
}

/// A scalar with the total order the sort kernels use (NaN above every number).
protocol SortableScalar {
    /// Whether `a` sorts strictly below `b`.
    static func sortsBelow(_ a: Self, _ b: Self) -> Bool
}

extension Float: SortableScalar {
    @inline(__always) static func sortsBelow(_ a: Float, _ b: Float) -> Bool { a < b || (b.isNaN && !a.isNaN) }
}
extension Float16: SortableScalar {
    @inline(__always) static func sortsBelow(_ a: Float16, _ b: Float16) -> Bool { a < b || (b.isNaN && !a.isNaN) }
}
extension Double: SortableScalar {
    @inline(__always) static func sortsBelow(_ a: Double, _ b: Double) -> Bool { a < b || (b.isNaN && !a.isNaN) }
}
extension Int32: SortableScalar {
    @inline(__always) static func sortsBelow(_ a: Int32, _ b: Int32) -> Bool { a < b }
}
extension Int16: SortableScalar {
    @inline(__always) static func sortsBelow(_ a: Int16, _ b: Int16) -> Bool { a < b }
}
extension Int8: SortableScalar {
    @inline(__always) static func sortsBelow(_ a: Int8, _ b: Int8) -> Bool { a < b }
}
extension UInt32: SortableScalar {
    @inline(__always) static func sortsBelow(_ a: UInt32, _ b: UInt32) -> Bool { a < b }
}
extension UInt16: SortableScalar {
    @inline(__always) static func sortsBelow(_ a: UInt16, _ b: UInt16) -> Bool { a < b }
}
extension UInt8: SortableScalar {
    @inline(__always) static func sortsBelow(_ a: UInt8, _ b: UInt8) -> Bool { a < b }
}
