import Foundation

/// The pointwise and im2col paths on Tessera's packed micro-kernel (``PackedGEMM``): the
/// weight `[O, C·kH·kW]` packed once (``PreparedWeights``, or per call for weights in memory
/// that may change), the activations read in place (pointwise) or from the im2col buffer, and
/// the epilogue applied to each tile in registers.
extension ConvolutionKernels {
    /// Whether convolutions may take the packed micro-kernel: unless the environment variable
    /// `TESSERA_PACKED_GEMM` is `0` (for A/B runs against OpenBLAS, see `Docs/Performance.md`).
    static let packedGEMMEnabled = ProcessInfo.processInfo.environment["TESSERA_PACKED_GEMM"] != "0"

    /// Whether a convolution of this geometry takes the packed micro-kernel: a CPU where it is
    /// preferred (``PackedGEMM/isPreferred``: AVX-512), one group, and the pointwise or im2col
    /// path (depthwise has its own kernel).
    static func usesPackedGEMM(_ g: ConvGeometry) -> Bool {
        PackedGEMM.isPreferred && packedGEMMEnabled && g.parameters.groups == 1
            && path(channels: g.c, kernelHeight: g.kh, kernelWidth: g.kw, parameters: g.parameters) != .depthwise
    }

    /// The weight `[O, C·kH·kW]` in the micro-kernel's panels: `prepared` when the caller has
    /// it, else packed now.
    static func weightPanels(
        _ g: ConvGeometry, weights: UnsafePointer<Float>, prepared: PackedGEMMOperand?
    ) -> PackedGEMMOperand {
        weightPanels(weights, rows: g.o, depth: g.patchSize, prepared: prepared)
    }

    /// A contiguous `[rows, depth]` weight in the micro-kernel's panels: `prepared` when it has
    /// those sizes, else packed now.
    static func weightPanels(
        _ weights: UnsafePointer<Float>, rows: Int, depth: Int, prepared: PackedGEMMOperand?
    ) -> PackedGEMMOperand {
        if let prepared, prepared.rows == rows, prepared.depth == depth { return prepared }
        return PackedGEMMOperand(packing: weights, lda: depth, rows: rows, depth: depth)
    }

    /// `out[n] = epilogue(W × in[n])` for 1×1, stride 1, unpadded convolutions of one group.
    static func packedPointwise(
        _ g: ConvGeometry, input: UnsafePointer<Float>, packed: PackedGEMMOperand,
        output: UnsafeMutablePointer<Float>, epilogue: ConvEpilogue
    ) {
        let positions = g.outputPositions
        for image in 0..<g.n {
            let planes = image * g.o * positions
            packedProduct(
                packed, columns: positions, b: input + image * g.c * g.h * g.w, ldb: positions, c: output + planes,
                ldc: positions, bias: epilogue.bias, residual: epilogue.residual.map { $0 + planes },
                clamp: epilogue.clamp)
        }
    }

    /// Columns of output per im2col task: the task's column buffer (`patch × columns` floats)
    /// about 192 KiB, so it is still in L2 when the micro-kernel reads it (at least 48 columns,
    /// `columnBufferBytes` permitting), then evened out over the tiles it makes in multiples of 16,
    /// and at most half the plane when that is 96 columns or more (both cores get work). A plane
    /// at most 4 columns wider than one such task is one task: the micro-kernel's full tiles and
    /// its narrow tail (a 7 × 7 plane as 48 + 1 columns, not 32 + 17).
    static func im2colTaskColumns(patch: Int, positions: Int, columnBufferBytes: Int) -> Int {
        let perColumn = patch * MemoryLayout<Float>.stride
        var columns = Swift.max(48, (192 << 10) / perColumn / 48 * 48)
        let half = ((positions + 1) / 2 + 15) / 16 * 16
        if half >= 96 { columns = Swift.min(columns, half) }
        if positions > columns && positions - columns <= 4 && positions * perColumn <= columnBufferBytes {
            return positions
        }
        columns = Swift.max(1, Swift.min(columns, columnBufferBytes / perColumn, positions))
        let tiles = (positions + columns - 1) / columns
        let even = ((positions + tiles - 1) / tiles + 15) / 16 * 16
        return Swift.max(1, Swift.min(columns, even, positions))
    }

    /// Output channels per im2col task: all of them, or — with fewer column tiles than two per
    /// thread — blocks of a multiple of 16 that make about two tasks per thread (each task then
    /// unrolls its columns itself; the unrolling is a small part of the product).
    static func im2colTaskRows(outputChannels o: Int, tiles: Int, budget: Int) -> Int {
        guard budget > 1, tiles < 2 * budget else { return Swift.max(1, o) }
        let parts = Swift.max(1, Swift.min((2 * budget + tiles - 1) / tiles, o / 16))
        return Swift.max(1, ((o + parts - 1) / parts + 15) / 16 * 16)
    }

    /// Columns and output channels per im2col task: ``im2colTaskColumns(patch:positions:columnBufferBytes:)``
    /// and ``im2colTaskRows(outputChannels:tiles:budget:)``, unless another split (up to twice
    /// as many tiles, never wider; the rows whole or in up to `2 × budget` blocks of a multiple
    /// of 16) finishes at least 3 % sooner when each of `budget` threads runs its contiguous run
    /// of the tasks (``im2colSplitTime(outputChannels:patch:positions:columns:rows:threads:)``).
    /// ResNet-50's stride-2 shortcuts were such splits: 784 columns in 5 tiles of 160 (3 tasks
    /// for one thread, 2 for the other) are now 5 tiles × 2 blocks of 256 channels; 196 columns
    /// in tiles of 80, 80 and 36 are 4 tiles of 49.
    static func im2colTaskSplit(
        outputChannels o: Int, patch: Int, positions: Int, columnBufferBytes: Int, budget: Int
    ) -> (columns: Int, rows: Int) {
        let baseColumns = im2colTaskColumns(patch: patch, positions: positions, columnBufferBytes: columnBufferBytes)
        let baseTiles = (positions + baseColumns - 1) / baseColumns
        let baseRows = im2colTaskRows(outputChannels: o, tiles: baseTiles, budget: budget)
        guard budget > 1, o > 0, positions > 0 else { return (baseColumns, baseRows) }
        let perColumn = patch * MemoryLayout<Float>.stride
        var best = (
            columns: baseColumns, rows: baseRows,
            time: im2colSplitTime(
                outputChannels: o, patch: patch, positions: positions, columns: baseColumns, rows: baseRows,
                threads: budget)
        )
        for tiles in baseTiles...(2 * baseTiles + 2 * budget) {
            for multiple in [48, 16, 1] {
                let columns = Swift.min(
                    positions, ((positions + tiles - 1) / tiles + multiple - 1) / multiple * multiple)
                if columns > baseColumns || columns * perColumn > columnBufferBytes { continue }
                for rowParts in 1...(2 * budget) where rowParts == 1 || o / rowParts >= 16 {
                    let rows = rowParts == 1 ? o : ((o + rowParts - 1) / rowParts + 15) / 16 * 16
                    let time = im2colSplitTime(
                        outputChannels: o, patch: patch, positions: positions, columns: columns, rows: rows,
                        threads: budget)
                    if time < best.time * 0.97 { best = (columns, rows, time) }
                }
            }
        }
        return (best.columns, best.rows)
    }

    /// When the last of `threads` threads finishes an im2col convolution split into tiles of
    /// `columns` positions × blocks of `rows` output channels (blocks inner), each thread
    /// running a contiguous run of the tasks: per task the product
    /// (``packedBlockCost(rows:columns:depth:)``), plus, when the thread's previous task had
    /// another tile, unrolling the tile's patches (about 12 lane-FMAs per float written).
    static func im2colSplitTime(
        outputChannels o: Int, patch: Int, positions: Int, columns: Int, rows: Int, threads: Int
    ) -> Double {
        let rowBlocks = (o + rows - 1) / rows
        let tasks = (positions + columns - 1) / columns * rowBlocks
        var slowest = 0.0
        for thread in 0..<threads {
            var time = 0.0
            var filled = -1
            for index in (thread * tasks / threads)..<((thread + 1) * tasks / threads) {
                let tile = index / rowBlocks
                let width = Swift.min(columns, positions - tile * columns)
                if tile != filled {
                    time += 12 * Double(patch * width)
                    filled = tile
                }
                let firstRow = (index % rowBlocks) * rows
                time += packedBlockCost(rows: Swift.min(rows, o - firstRow), columns: width, depth: patch)
            }
            slowest = Swift.max(slowest, time)
        }
        return slowest
    }

    /// Im2col and the packed product fused per task: each task unrolls the patches of its block
    /// of output positions into its thread's own scratch block (``ThreadScratch``) and
    /// multiplies it at once, epilogue included, so the buffer never leaves the core's cache and
    /// the plane needs one parallel loop rather than one per tile; tiles and channel blocks as
    /// ``im2colTaskSplit(outputChannels:patch:positions:columnBufferBytes:budget:)`` picks.
    static func packedIm2colGEMM(
        _ g: ConvGeometry, input: UnsafePointer<Float>, packed: PackedGEMMOperand,
        output: UnsafeMutablePointer<Float>, epilogue: ConvEpilogue, columnBufferBytes: Int
    ) {
        let positions = g.outputPositions
        let patch = g.patchSize
        let (tile, rows) = im2colTaskSplit(
            outputChannels: g.o, patch: patch, positions: positions, columnBufferBytes: columnBufferBytes,
            budget: KernelThreads.coreBudget)
        let tiles = (positions + tile - 1) / tile
        let rowBlocks = (g.o + rows - 1) / rows
        let cost = ParallelCost.perItem(nanoseconds: Double(rows * patch * tile) * 0.025 + Double(patch * tile) * 0.3)
        for image in 0..<g.n {
            let imageInput = input + image * g.c * g.h * g.w
            let planes = image * g.o * positions
            parallelFor(count: tiles * rowBlocks, cost: cost) { range in
                ThreadScratch.withFloats(count: patch * tile) { columns in
                    var filled = -1
                    for index in range {
                        let tileIndex = index / rowBlocks
                        let start = tileIndex * tile
                        let end = Swift.min(positions, start + tile)
                        if filled != tileIndex {
                            Im2Col.fill(columns, from: imageInput, geometry: g, positions: start..<end)
                            filled = tileIndex
                        }
                        let firstRow = (index % rowBlocks) * rows
                        let offset = planes + firstRow * positions + start
                        PackedGEMM.multiply(
                            packed, firstRow: firstRow, rows: Swift.min(rows, g.o - firstRow), columns: end - start,
                            b: columns, ldb: end - start, c: output + offset, ldc: positions,
                            bias: epilogue.bias.map { $0 + firstRow }, residual: epilogue.residual.map { $0 + offset },
                            residualStride: positions, clamp: epilogue.clamp)
                    }
                }
            }
        }
    }

    /// `c = epilogue(A · b)` over all of A's rows and `columns` columns, split into blocks of
    /// columns and of rows (whole panels) across `budget` threads when the product is large
    /// enough (``packedBlocks(rows:columns:depth:budget:)``); one micro-kernel call per block.
    static func packedProduct(
        _ a: PackedGEMMOperand, columns n: Int, b: UnsafePointer<Float>, ldb: Int, c: UnsafeMutablePointer<Float>,
        ldc: Int, bias: UnsafePointer<Float>?, residual: UnsafePointer<Float>?, clamp: ConvolutionClamp,
        residualStride: Int? = nil, budget: Int = KernelThreads.coreBudget
    ) {
        let m = a.rows
        let (columnBlock, rowBlock) = packedBlocks(rows: m, columns: n, depth: a.depth, budget: budget)
        let columnBlocks = (n + columnBlock - 1) / columnBlock
        let rowBlocks = (m + rowBlock - 1) / rowBlock
        let tasks = columnBlocks * rowBlocks
        let work = Double(m) * Double(n) * Double(a.depth)
        let ldr = residualStride ?? ldc
        parallelFor(count: tasks, cost: .perItem(nanoseconds: work / Double(tasks) * 0.025 + 200)) { range in
            for index in range {
                let firstColumn = (index % columnBlocks) * columnBlock
                let firstRow = (index / columnBlocks) * rowBlock
                PackedGEMM.multiply(
                    a, firstRow: firstRow, rows: Swift.min(rowBlock, m - firstRow),
                    columns: Swift.min(columnBlock, n - firstColumn), b: b + firstColumn, ldb: ldb,
                    c: c + firstRow * ldc + firstColumn, ldc: ldc, bias: bias.map { $0 + firstRow },
                    residual: residual.map { $0 + firstRow * ldr + firstColumn }, residualStride: ldr, clamp: clamp)
            }
        }
    }

    /// Columns and rows per block of a packed product: the whole product below ~1 M
    /// multiply-adds or with one thread; otherwise the split of `budget` or `2 × budget` blocks
    /// that finishes first when each thread runs its own contiguous run of blocks (as
    /// ``parallelFor(count:cost:alignment:_:)`` hands them out), by ``packedBlockCost(rows:columns:depth:)``.
    ///
    /// Candidates split the columns into 1 to `parts` blocks (each at least 96 columns) of a
    /// multiple of 48 (the micro-kernel's tile), of 16 (a vector) or of exactly `n / parts`
    /// (a tail of at most 4 columns takes the narrow kernel at full speed), and the rows into
    /// whole panels. Rounding the columns to 48 alone left a 28 × 28 plane's 784 columns as
    /// 240 + 240 | 240 + 64: one thread with half as much work again as the other. Ties keep
    /// `2 × budget` blocks (a delayed thread's last block can be taken by another), then the
    /// most column blocks (each thread reads its own part of `b`), then the rounding to 48.
    static func packedBlocks(rows m: Int, columns n: Int, depth k: Int, budget: Int) -> (columns: Int, rows: Int) {
        guard budget > 1, m * n * k >= 1 << 20 else { return (Swift.max(1, n), Swift.max(1, m)) }
        let panel = PackedGEMMOperand.panelRows
        var best: (columns: Int, rows: Int, time: Double)?
        for parts in [2 * budget, budget] {
            for columnParts in (1...parts).reversed() where parts % columnParts == 0 {
                if columnParts > 1 && n / columnParts < 96 { continue }
                let rowParts = Swift.min(parts / columnParts, Swift.max(1, m / panel))
                let rowBlock = ((m + rowParts - 1) / rowParts + panel - 1) / panel * panel
                let even = (n + columnParts - 1) / columnParts
                for multiple in [48, 16, 1] {
                    let columnBlock = Swift.min(n, (even + multiple - 1) / multiple * multiple)
                    let time = packedSplitTime(
                        rows: m, columns: n, depth: k, rowBlock: rowBlock, columnBlock: columnBlock, threads: budget)
                    // A split must be 3 % faster to replace an earlier (preferred) one.
                    if best == nil || time < best!.time * 0.97 { best = (columnBlock, rowBlock, time) }
                }
            }
        }
        return (best!.columns, best!.rows)
    }

    /// When the last of `threads` threads finishes a product split into `rowBlock × columnBlock`
    /// blocks (column blocks inner), each thread running a contiguous run of the blocks, in
    /// units of ``packedBlockCost(rows:columns:depth:)``.
    static func packedSplitTime(
        rows m: Int, columns n: Int, depth k: Int, rowBlock: Int, columnBlock: Int, threads: Int
    ) -> Double {
        let columnBlocks = (n + columnBlock - 1) / columnBlock
        let tasks = columnBlocks * ((m + rowBlock - 1) / rowBlock)
        var slowest = 0.0
        for thread in 0..<threads {
            var time = 0.0
            for index in (thread * tasks / threads)..<((thread + 1) * tasks / threads) {
                let firstColumn = (index % columnBlocks) * columnBlock
                let firstRow = (index / columnBlocks) * rowBlock
                time += packedBlockCost(
                    rows: Swift.min(rowBlock, m - firstRow), columns: Swift.min(columnBlock, n - firstColumn), depth: k)
            }
            slowest = Swift.max(slowest, time)
        }
        return slowest
    }

    /// The micro-kernel's time for a block in lane-FMAs: rows in whole panels; columns in
    /// tiles of 48, then a tail of at most 4 columns at one lane each (the narrow kernel) or
    /// masked vectors of 16; times the depth; plus a fixed cost per call (~0.2 µs).
    static func packedBlockCost(rows: Int, columns: Int, depth: Int) -> Double {
        let panel = PackedGEMMOperand.panelRows
        let tail = columns % 48
        let tailLanes = tail <= 4 ? tail : (tail + 15) / 16 * 16
        let lanes = columns / 48 * 48 + tailLanes
        return Double((rows + panel - 1) / panel * panel * lanes) * Double(depth) + 16_000
    }
}
