// MARK: - Public entry points

extension CopyKernels {
    /// Materialises a strided view as a contiguous row-major buffer.
    ///
    /// Any view a ``StridedLayout`` can describe works: transposes and permutations, broadcasts
    /// (stride 0), slices (an offset and larger strides) and reversed axes (negative strides).
    /// Dimensions are merged first where the layout allows; contiguous inner runs are moved
    /// with `memcpy`, and a view whose last dimension is strided but has another unit-stride
    /// dimension (a transpose) is copied in cache-sized tiles. Large copies run in parallel.
    ///
    /// ```swift
    /// // [1, 80, 3000] -> [1, 3000, 80], float32
    /// let view = StridedLayout(contiguous: [1, 80, 3000]).permuted([0, 2, 1])
    /// CopyKernels.copy(from: x, layout: view, elementSize: 4, to: out)
    /// ```
    ///
    /// - Parameters:
    ///   - from: The base pointer the layout's offset and strides are measured from.
    ///   - layout: The view to read; `layout.count` elements are written.
    ///   - elementSize: Bytes per element: 1, 2, 4 or 8.
    ///   - to: The contiguous destination of shape `layout.shape`; must not overlap the source.
    /// - Precondition: `elementSize` is 1, 2, 4 or 8.
    package static func copy(
        from: UnsafeRawPointer, layout: StridedLayout, elementSize: Int, to: UnsafeMutableRawPointer
    ) {
        checkElementSize(elementSize, op: "copy")
        stridedCopy(
            shape: layout.shape, from: from + layout.offset * elementSize, strides: layout.strides,
            to: to, strides: StridedLayout.contiguousStrides(for: layout.shape), elementSize: elementSize)
    }

    /// Writes the dimensions of a strided operand in a new order, contiguously: a copy of
    /// `layout.permuted(permutation)`.
    ///
    /// Output dimension `i` is input dimension `permutation[i]`, so the output shape is
    /// `permutation.map { layout.shape[$0] }`.
    ///
    /// ```swift
    /// // NCHW [2, 3, 4, 5] -> NHWC [2, 4, 5, 3]
    /// CopyKernels.permute(from: x, layout: StridedLayout(contiguous: [2, 3, 4, 5]),
    ///                     permutation: [0, 2, 3, 1], elementSize: 4, to: out)
    /// ```
    ///
    /// - Precondition: `permutation` is a permutation of `0..<layout.rank`; `elementSize` is 1,
    ///   2, 4 or 8.
    package static func permute(
        from: UnsafeRawPointer, layout: StridedLayout, permutation: [Int], elementSize: Int,
        to: UnsafeMutableRawPointer
    ) {
        copy(from: from, layout: layout.permuted(permutation), elementSize: elementSize, to: to)
    }
}

// MARK: - The strided-to-strided engine

extension CopyKernels {
    /// Copies the box `shape` from `src` (already offset to element `[0, …]`) read with
    /// `srcStrides` to `dst` written with `dstStrides` (both in elements). Every other copy
    /// kernel reduces to one or more calls of this. The regions must not overlap.
    static func stridedCopy(
        shape: [Int], from src: UnsafeRawPointer, strides srcStrides: [Int], to dst: UnsafeMutableRawPointer,
        strides dstStrides: [Int], elementSize: Int
    ) {
        if shape.contains(0) { return }
        let collapsed = CollapsedLayouts(shape: shape, strides: [dstStrides, srcStrides])
        let kernel = StridedCopy(
            shape: collapsed.shape, srcStrides: collapsed.strides[1], dstStrides: collapsed.strides[0], src: src,
            dst: dst)
        dispatch(kernel, elementSize: elementSize, op: "copy")
    }

    /// Side of the square tiles a transpose is copied in, in elements. 32 × 32 tiles of 8-byte
    /// elements (8 KiB read, 8 KiB written) stay in a 32 KiB L1 cache.
    static let transposeTile = 32

    /// A collapsed strided copy (no dimension of size 1 except a scalar's `[1]`, none of size 0).
    struct StridedCopy: CopyWordKernel {
        let shape: [Int]
        let srcStrides: [Int]
        let dstStrides: [Int]
        let src: UnsafeRawPointer
        let dst: UnsafeMutableRawPointer

        func run<W: CopyWord>(_: W.Type) {
            let rank = shape.count
            let n = shape[rank - 1]
            let sInner = srcStrides[rank - 1]
            let dInner = dstStrides[rank - 1]
            let size = MemoryLayout<W>.size
            let rowBytes = n * size
            if dInner == 1 && sInner == 1 {
                if rank == 1 {
                    // One contiguous run: split it by bytes across threads.
                    let cost = ParallelCost(nanosecondsPerItem: CopyKernels.nanosecondsPerByte)
                    let src = self.src
                    let dst = self.dst
                    parallelFor(count: rowBytes, cost: cost, alignment: 4096) { range in
                        (dst + range.lowerBound).copyMemory(from: src + range.lowerBound, byteCount: range.count)
                    }
                } else {
                    let cost = ParallelCost(nanosecondsPerItem: CopyKernels.nanosecondsPerByte * Double(rowBytes) + 5)
                    forEachRow(size: size, cost: cost) { s, d in d.copyMemory(from: s, byteCount: rowBytes) }
                }
            } else if dInner == 1 && sInner == 0 {
                let cost = ParallelCost(nanosecondsPerItem: CopyKernels.nanosecondsPerByte * Double(rowBytes) + 5)
                forEachRow(size: size, cost: cost) { s, d in
                    CopyKernels.fillRun(d, count: n, value: s.loadUnaligned(as: W.self))
                }
            } else if dInner == 1, n >= 4, let k = transposeAxis(), shape[k] >= 4 {
                transposeBlocked(W.self, unitAxis: k)
            } else {
                let cost = ParallelCost(nanosecondsPerItem: CopyKernels.nanosecondsPerStridedElement * Double(n) + 5)
                let sStep = sInner * size
                let dStep = dInner * size
                forEachRow(size: size, cost: cost) { s, d in
                    CopyKernels.copyRun(W.self, from: s, step: sStep, to: d, step: dStep, count: n)
                }
            }
        }

        /// The outer dimension (not the last) with source stride 1, if any: reading along it is
        /// contiguous, so the copy is a transpose of that dimension and the last one.
        func transposeAxis() -> Int? {
            var found: Int? = nil
            for axis in 0..<(shape.count - 1) where srcStrides[axis] == 1 { found = axis }
            return found
        }

        /// Calls `body` with the source and destination of every row (all dimensions but the
        /// last), splitting the rows across threads.
        @inline(__always)
        func forEachRow(size: Int, cost: ParallelCost, _ body: (UnsafeRawPointer, UnsafeMutableRawPointer) -> Void) {
            let outerRank = shape.count - 1
            let rows = CopyKernels.product(shape, 0..<outerRank)
            let shape = self.shape
            let srcStrides = self.srcStrides
            let dstStrides = self.dstStrides
            let src = self.src
            let dst = self.dst
            parallelFor(count: rows, cost: cost) { range in
                StridedRowCursor.withCursor(
                    shape: shape, strides: srcStrides, otherStrides: dstStrides, row: range.lowerBound
                ) { cursor in
                    for _ in range {
                        body(src + cursor.offset * size, dst + cursor.otherOffset * size)
                        _ = cursor.nextRow()
                    }
                }
            }
        }

        /// Copies a transpose in square tiles: dimension `unitAxis` is read with stride 1, the
        /// last dimension is written with stride 1, and every other dimension is a batch.
        /// Work is split over (batch, block of `unitAxis`) pairs.
        func transposeBlocked<W: CopyWord>(_: W.Type, unitAxis k: Int) {
            let size = MemoryLayout<W>.size
            let last = shape.count - 1
            let nK = shape[k]
            let nL = shape[last]
            let dK = dstStrides[k] * size
            let sL = srcStrides[last] * size
            var batchShape: [Int] = []
            var batchSrc: [Int] = []
            var batchDst: [Int] = []
            for axis in 0..<last where axis != k {
                batchShape.append(shape[axis])
                batchSrc.append(srcStrides[axis])
                batchDst.append(dstStrides[axis])
            }
            let tile = CopyKernels.transposeTile
            // Row strides that are multiples of 1 KiB put every row of a tile in a handful of
            // cache sets; the buffered 16 × 16 path avoids the evictions that causes (about 2x
            // faster for a 1024 x 1024 float32 transpose). Otherwise the plain 4 × 4 register
            // path is faster (no extra buffer traffic).
            let conflicting = sL % 1024 == 0 || dK % 1024 == 0
            let kBlocks = (nK + tile - 1) / tile
            let units = CopyKernels.product(batchShape, 0..<batchShape.count) * kBlocks
            let cost = ParallelCost(nanosecondsPerItem: 0.3 * Double(tile * nL) + 20)
            let src = self.src
            let dst = self.dst
            parallelFor(count: units, cost: cost) { range in
                let buffer = UnsafeMutableRawPointer.allocate(byteCount: 16 * 64, alignment: 64)
                defer { buffer.deallocate() }
                for unit in range {
                    var batch = unit / kBlocks
                    let k0 = (unit % kBlocks) * tile
                    let k1 = Swift.min(nK, k0 + tile)
                    var sBase = 0
                    var dBase = 0
                    for axis in stride(from: batchShape.count - 1, through: 0, by: -1) {
                        let i = batch % batchShape[axis]
                        batch /= batchShape[axis]
                        sBase += i * batchSrc[axis]
                        dBase += i * batchDst[axis]
                    }
                    let s = src + sBase * size
                    let d = dst + dBase * size
                    var l0 = 0
                    while l0 < nL {
                        let l1 = Swift.min(nL, l0 + tile)
                        if W.self == UInt32.self && conflicting {
                            CopyKernels.transposeTile32Bit(
                                s, d, rows: k0..<k1, columns: l0..<l1, sL: sL, dK: dK, buffer: buffer)
                        } else if W.self != UInt64.self {
                            CopyKernels.transposeTile4x4(W.self, s, d, rows: k0..<k1, columns: l0..<l1, sL: sL, dK: dK)
                        } else {
                            CopyKernels.transposeTile(W.self, s, d, rows: k0..<k1, columns: l0..<l1, sL: sL, dK: dK)
                        }
                        l0 = l1
                    }
                }
            }
        }
    }

    /// One transpose tile, element by element: `d[i * dK + j] = s[i + j * sL]` for `i` in
    /// `rows`, `j` in `columns` (`dK` and `sL` in bytes).
    @inline(__always)
    static func transposeTile<W: CopyWord>(
        _: W.Type, _ s: UnsafeRawPointer, _ d: UnsafeMutableRawPointer, rows: Range<Int>, columns: Range<Int>, sL: Int,
        dK: Int
    ) {
        let size = MemoryLayout<W>.size
        for i in rows {
            let sRow = s + i * size
            let dRow = d + i * dK
            CopyKernels.copyRun(
                W.self, from: sRow + columns.lowerBound * sL, step: sL, to: dRow + columns.lowerBound * size,
                step: size,
                count: columns.count)
        }
    }

    /// A transpose tile of 1-, 2- or 4-byte words in 4 × 4 register blocks (four vector
    /// loads, four vector stores), with the ragged edges done element by element.
    @inline(__always)
    static func transposeTile4x4<W: CopyWord>(
        _: W.Type, _ s: UnsafeRawPointer, _ d: UnsafeMutableRawPointer, rows: Range<Int>, columns: Range<Int>, sL: Int,
        dK: Int
    ) {
        let rowEnd = rows.lowerBound + (rows.count & ~3)
        let columnEnd = columns.lowerBound + (columns.count & ~3)
        var j = columns.lowerBound
        while j < columnEnd {
            var i = rows.lowerBound
            let s0 = s + j * sL
            while i < rowEnd {
                let p = s0 + i * MemoryLayout<W>.size
                let a = p.loadUnaligned(as: SIMD4<W>.self)
                let b = (p + sL).loadUnaligned(as: SIMD4<W>.self)
                let c = (p + 2 * sL).loadUnaligned(as: SIMD4<W>.self)
                let e = (p + 3 * sL).loadUnaligned(as: SIMD4<W>.self)
                let q = d + i * dK + j * MemoryLayout<W>.size
                q.storeBytes(of: SIMD4(a[0], b[0], c[0], e[0]), as: SIMD4<W>.self)
                (q + dK).storeBytes(of: SIMD4(a[1], b[1], c[1], e[1]), as: SIMD4<W>.self)
                (q + 2 * dK).storeBytes(of: SIMD4(a[2], b[2], c[2], e[2]), as: SIMD4<W>.self)
                (q + 3 * dK).storeBytes(of: SIMD4(a[3], b[3], c[3], e[3]), as: SIMD4<W>.self)
                i += 4
            }
            j += 4
        }
        if rowEnd < rows.upperBound {
            transposeTile(W.self, s, d, rows: rowEnd..<rows.upperBound, columns: columns, sL: sL, dK: dK)
        }
        if columnEnd < columns.upperBound {
            transposeTile(
                W.self, s, d, rows: rows.lowerBound..<rowEnd, columns: columnEnd..<columns.upperBound, sL: sL,
                dK: dK)
        }
    }

    /// A 4-byte transpose tile: 16 × 16 blocks go through a 1 KiB buffer so every source and
    /// destination cache line is touched once, in full. Without it, power-of-two row lengths
    /// (a 4096-wide matrix) map every row of a tile to the same cache set and lines are
    /// evicted before they are used up. The ragged edges use 4 × 4 register blocks.
    @inline(__always)
    static func transposeTile32Bit(
        _ s: UnsafeRawPointer, _ d: UnsafeMutableRawPointer, rows: Range<Int>, columns: Range<Int>, sL: Int, dK: Int,
        buffer: UnsafeMutableRawPointer
    ) {
        let rowEnd = rows.lowerBound + (rows.count & ~15)
        let columnEnd = columns.lowerBound + (columns.count & ~15)
        var j0 = columns.lowerBound
        while j0 < columnEnd {
            var i0 = rows.lowerBound
            while i0 < rowEnd {
                // Buffer row ii holds destination row i0 + ii, columns j0..<j0 + 16.
                for jj in stride(from: 0, to: 16, by: 4) {
                    let p = s + (j0 + jj) * sL + i0 * 4
                    for ii in stride(from: 0, to: 16, by: 4) {
                        let a = (p + ii * 4).loadUnaligned(as: SIMD4<UInt32>.self)
                        let b = (p + sL + ii * 4).loadUnaligned(as: SIMD4<UInt32>.self)
                        let c = (p + 2 * sL + ii * 4).loadUnaligned(as: SIMD4<UInt32>.self)
                        let e = (p + 3 * sL + ii * 4).loadUnaligned(as: SIMD4<UInt32>.self)
                        let q = buffer + ii * 64 + jj * 4
                        q.storeBytes(of: SIMD4(a[0], b[0], c[0], e[0]), as: SIMD4<UInt32>.self)
                        (q + 64).storeBytes(of: SIMD4(a[1], b[1], c[1], e[1]), as: SIMD4<UInt32>.self)
                        (q + 128).storeBytes(of: SIMD4(a[2], b[2], c[2], e[2]), as: SIMD4<UInt32>.self)
                        (q + 192).storeBytes(of: SIMD4(a[3], b[3], c[3], e[3]), as: SIMD4<UInt32>.self)
                    }
                }
                for ii in 0..<16 {
                    (d + (i0 + ii) * dK + j0 * 4).copyMemory(from: buffer + ii * 64, byteCount: 64)
                }
                i0 += 16
            }
            j0 += 16
        }
        if rowEnd < rows.upperBound {
            transposeTile4x4(UInt32.self, s, d, rows: rowEnd..<rows.upperBound, columns: columns, sL: sL, dK: dK)
        }
        if columnEnd < columns.upperBound {
            transposeTile4x4(
                UInt32.self, s, d, rows: rows.lowerBound..<rowEnd, columns: columnEnd..<columns.upperBound, sL: sL,
                dK: dK)
        }
    }

    /// Copies `count` words from `from` to `to`, advancing each by its step in bytes. Pointers
    /// are bumped rather than indexed so the loop carries no overflow-checked multiplies.
    @inline(__always)
    static func copyRun<W: CopyWord>(
        _: W.Type, from: UnsafeRawPointer, step sStep: Int, to: UnsafeMutableRawPointer, step dStep: Int, count: Int
    ) {
        var s = from
        var d = to
        for _ in 0..<count {
            d.storeBytes(of: s.loadUnaligned(as: W.self), as: W.self)
            s += sStep
            d += dStep
        }
    }
}
