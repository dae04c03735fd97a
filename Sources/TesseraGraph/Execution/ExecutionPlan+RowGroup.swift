import TesseraKernels

extension ExecutionPlan {
    /// What a ``Step/rowFused(entry:_:)`` step computes for each chunk of rows (see
    /// ``RowFusion``): the members in order, each into a per-row buffer, then the root's program.
    struct RowGroup {
        /// A fused program and the entries it reads, in the order of its `.input` instructions.
        struct Program {
            var entry: Int
            var program: FusedProgram
            var leaves: [Int]
        }

        /// A reduction over every axis after the row axis (``RowGroup/rowAxis``) that the root's
        /// program (or a later member's producer) reads, computed per chunk of rows: of
        /// `producer`'s program run on the chunk when there is one, else of `input`'s rows.
        struct Member {
            var entry: Int
            var op: ReductionOp
            var axes: [Int]
            var input: Int
            var producer: Program?
            /// Set when `producer` computes `(input - center)²` of a root-shaped `Float` leaf and
            /// an earlier member: the step sums the squares a row at a time without the program.
            var centeredSquares: CenteredSquares?
        }

        /// The entries of a member's `(x - c)²`: the root-shaped leaf `x` and the earlier member `c`.
        struct CenteredSquares {
            var input: Int
            var center: Int
        }

        /// The axis whose entries are the rows; every axis before it has size 1, every member
        /// reduces the axes after it.
        var rowAxis: Int
        /// In topological order: a member reads only earlier members.
        var members: [Member]
        var root: Program
        /// Each member's producer's run plan (`nil` without a producer) and the root's, kept
        /// between chunks and runs: every full chunk has the same layouts (the chunk's start
        /// goes into the pointers, not the layouts' offsets), so each program is planned once.
        let memberMemos: [FusedPlanMemo?]
        let rootMemo = FusedPlanMemo()

        init(rowAxis: Int, members: [Member], root: Program) {
            self.rowAxis = rowAxis
            self.members = members
            self.root = root
            memberMemos = members.map { $0.producer == nil ? nil : FusedPlanMemo() }
        }

        /// The entries computed outside the step that it reads.
        var reads: [Int] {
            let inside = Set(members.map(\.entry))
            var read: [Int] = []
            func add(_ entries: [Int]) {
                for e in entries where !inside.contains(e) && !read.contains(e) { read.append(e) }
            }
            for member in members { add(member.producer?.leaves ?? [member.input]) }
            add(root.leaves)
            return read
        }
    }

    /// Rows per chunk of a row-fused step: the most whose root-shaped slice holds at most this
    /// many elements (256 KB of `Float`), so a chunk's input, scratch and output stay in the
    /// core's L2 cache between the step's passes. Each chunk costs a few microseconds of setup
    /// (planning its reductions, running each program's block loop): on T3 (`[256, 768]`, one
    /// thread) chunks of 32 Ki elements took 0.135–0.146 ms, of 64 Ki 0.119–0.126 ms.
    static let rowChunkElements = 65_536

    /// Runs a row-fused step: chunks of rows in parallel, each chunk's members into per-row
    /// buffers and then the root's program into the result. The size-1 axes before the row axis
    /// are dropped: every program runs over `shape` from the row axis on.
    func runRowGroup(_ group: RowGroup, values: [TensorValue?]) -> TensorValue {
        let entry = entries[group.root.entry]
        let rowAxis = group.rowAxis
        let shape = Array(entry.shape[rowAxis...])
        let leading = shape[0]
        let rowSize = shape.dropFirst().reduce(1, *)
        let out = TensorStorage.allocate(count: leading * rowSize, type: entry.type)
        let result = TensorValue(storage: out, layout: StridedLayout(contiguous: entry.shape), type: entry.type)
        guard leading > 0 && rowSize > 0 else { return result }
        let maximumRows = Swift.max(1, ExecutionPlan.rowChunkElements / rowSize)
        let chunks = (leading + maximumRows - 1) / maximumRows
        let rowsPerChunk = (leading + chunks - 1) / chunks
        // Per-row buffers: one slot of `rowsPerChunk` elements per member, 64-byte aligned.
        var slot = [Int: Int]()
        var slotBytes = 0
        for member in group.members {
            slot[member.entry] = slotBytes
            slotBytes += (rowsPerChunk * entries[member.entry].type.byteCount + 63) / 64 * 64
        }
        let rowStatistics = rowStatistics(group, values: values, slot: slot)
        var scratchBytes = 0
        for member in group.members where rowStatistics == nil {
            guard let producer = member.producer else { continue }
            scratchBytes = Swift.max(scratchBytes, rowsPerChunk * rowSize * entries[producer.entry].type.byteCount)
        }
        let outside = values
        let cost = ParallelCost(nanosecondsPerItem: Double(rowsPerChunk * rowSize) * 0.6)
        parallelFor(count: chunks, cost: cost) { range in
            let buffers = UnsafeMutableRawPointer.allocate(
                byteCount: Swift.max(64, slotBytes + scratchBytes), alignment: 64)
            defer { buffers.deallocate() }
            let scratch = buffers + slotBytes
            for chunk in range {
                let start = chunk * rowsPerChunk
                let rows = Swift.min(rowsPerChunk, leading - start)
                var chunkShape = shape
                chunkShape[0] = rows
                var rowChunkShape = [Int](repeating: 1, count: shape.count)
                rowChunkShape[0] = rows
                // `leaf` as a program input over `iteration` (a chunk of the root's shape from the
                // row axis on): a member's per-row buffer, or the rows of a value computed before.
                func input(_ leaf: Int, iteration: [Int]) -> FusedInput {
                    if let offset = slot[leaf] {
                        return FusedInput(
                            pointer: buffers + offset,
                            layout: StridedLayout(contiguous: rowChunkShape).broadcast(to: iteration),
                            type: entries[leaf].type)
                    }
                    let value = outside[leaf]!
                    // The chunk's start moves the pointer, so every full chunk has one layout.
                    var layout = Self.rowLayout(value.layout, shape: entry.shape, rowAxis: rowAxis)
                    layout.shape[0] = rows
                    return FusedInput(
                        pointer: value.pointer + start * layout.strides[0] * value.type.byteCount, layout: layout,
                        type: value.type)
                }
                func run(
                    _ program: RowGroup.Program, into target: UnsafeMutableRawPointer, iteration: [Int],
                    memo: FusedPlanMemo?
                ) {
                    program.program.run(
                        shape: iteration,
                        inputs: program.leaves.map { input($0, iteration: iteration) },
                        outputs: [FusedOutput(pointer: target, type: entries[program.entry].type)], memo: memo)
                }
                if let rowStatistics {
                    // Every member of a row while the row is in L1, then the next row's.
                    for row in 0..<rows {
                        for statistic in rowStatistics {
                            statistic.compute(row: start + row, slotRow: row, buffers: buffers, count: rowSize)
                        }
                    }
                }
                for (m, member) in group.members.enumerated() where rowStatistics == nil {
                    let source: FusedInput
                    if let producer = member.producer {
                        run(producer, into: scratch, iteration: chunkShape, memo: group.memberMemos[m])
                        source = FusedInput(
                            pointer: UnsafeRawPointer(scratch), layout: StridedLayout(contiguous: chunkShape),
                            type: entries[producer.entry].type)
                    } else {
                        source = input(member.input, iteration: chunkShape)
                    }
                    ReductionKernels.reduce(
                        member.op, input: source.pointer, layout: source.layout, type: source.type,
                        axes: member.axes.map { $0 - rowAxis }, output: buffers + slot[member.entry]!,
                        outputType: entries[member.entry].type
                    )
                }
                run(
                    group.root, into: out.pointer + start * rowSize * entry.type.byteCount, iteration: chunkShape,
                    memo: group.rootMemo)
            }
        }
        return result
    }

    /// One member computed a row at a time by ``RowMoments``: the sum (or mean) of a `Float`
    /// value's contiguous rows, or of their squared deviations from an earlier member.
    struct RowStatistic {
        /// Row `r` of the input starts at `input + r * rowStride`.
        var input: UnsafePointer<Float>
        var rowStride: Int
        /// The byte offset of the center member's per-row buffer (`nil`: a plain sum).
        var centerSlot: Int?
        var slot: Int
        var isMean: Bool

        /// Writes the statistic of row `row` to slot row `slotRow`.
        @inline(__always)
        func compute(row: Int, slotRow: Int, buffers: UnsafeMutableRawPointer, count: Int) {
            let p = input + row * rowStride
            let sum: Float
            if let centerSlot {
                let center = (buffers + centerSlot).assumingMemoryBound(to: Float.self)[slotRow]
                sum = RowMoments.centeredSquareSum(p, count: count, center: center)
            } else {
                sum = RowMoments.sum(p, count: count)
            }
            (buffers + slot).assumingMemoryBound(to: Float.self)[slotRow] =
                isMean ? RowMoments.mean(sum: sum, count: count) : sum
        }
    }

    /// `layout` broadcast to the root's `shape`, without the size-1 axes before `rowAxis`.
    static func rowLayout(_ layout: StridedLayout, shape: [Int], rowAxis: Int) -> StridedLayout {
        let full = layout.broadcast(to: shape)
        guard rowAxis > 0 else { return full }
        return StridedLayout(
            shape: Array(full.shape[rowAxis...]), strides: Array(full.strides[rowAxis...]), offset: full.offset)
    }

    /// The members of `group` as row statistics, when every one is a `Float` sum or mean of a
    /// value whose rows are contiguous (a plain input, or the squared deviations of one from an
    /// earlier member); `nil` otherwise, and the members run as programs and reductions.
    func rowStatistics(_ group: RowGroup, values: [TensorValue?], slot: [Int: Int]) -> [RowStatistic]? {
        let rowAxis = group.rowAxis
        let fullShape = entries[group.root.entry].shape
        let shape = Array(fullShape[rowAxis...])
        let trailing = Array(StridedLayout.contiguousStrides(for: shape).dropFirst())
        var statistics: [RowStatistic] = []
        for member in group.members {
            guard member.op == .sum || member.op == .mean, entries[member.entry].type == .float32 else { return nil }
            let input: Int
            var centerSlot: Int?
            if let squares = member.centeredSquares {
                input = squares.input
                centerSlot = slot[squares.center]
            } else if member.producer == nil {
                input = member.input
            } else {
                return nil
            }
            guard let value = values[input], value.type == .float32 else { return nil }
            let layout = Self.rowLayout(value.layout, shape: fullShape, rowAxis: rowAxis)
            guard Array(layout.strides.dropFirst()) == trailing else { return nil }
            statistics.append(
                RowStatistic(
                    input: (value.pointer + layout.offset * 4).assumingMemoryBound(to: Float.self),
                    rowStride: layout.strides[0], centerSlot: centerSlot, slot: slot[member.entry]!,
                    isMean: member.op == .mean))
        }
        return statistics
    }
}
