/// The iteration plan of one reduction: the input's dimensions after collapsing, split into
/// kept dimensions (one output element per index) and reduced dimensions, both in the
/// input's axis order.
struct ReductionPlan {
    var offset: Int
    var keptShape: [Int]
    var keptStrides: [Int]
    var reducedShape: [Int]
    var reducedStrides: [Int]
    var outputCount: Int
    var reducedCount: Int

    /// - Precondition (checked by the caller): `axes` are valid for `layout`.
    init(layout: StridedLayout, axes: [Int]) {
        var outShape = layout.shape
        for axis in axes { outShape[axis] = 1 }
        var outStrides = StridedLayout.contiguousStrides(for: outShape)
        for axis in axes { outStrides[axis] = 0 }
        offset = layout.offset
        outputCount = outShape.reduce(1, *)
        reducedCount = axes.reduce(1) { $0 * layout.shape[$1] }
        keptShape = []
        keptStrides = []
        reducedShape = []
        reducedStrides = []
        // Reduced and kept dimensions never merge with each other: a kept dimension of size > 1
        // has a non-zero output stride, a reduced one has output stride 0.
        let collapsed = CollapsedLayouts(shape: layout.shape, strides: [layout.strides, outStrides])
        if collapsed.shape == [1] { return }
        for d in 0..<collapsed.shape.count {
            if collapsed.strides[1][d] == 0 {
                reducedShape.append(collapsed.shape[d])
                reducedStrides.append(collapsed.strides[0][d])
            } else {
                keptShape.append(collapsed.shape[d])
                keptStrides.append(collapsed.strides[0][d])
            }
        }
    }

    /// The input position (relative to `offset`) of kept index `linear` (row-major).
    @inline(__always)
    func keptPosition(_ linear: Int) -> Int {
        var rest = linear
        var position = 0
        var d = keptShape.count - 1
        while d >= 0 {
            let size = keptShape[d]
            position += (rest % size) * keptStrides[d]
            rest /= size
            d -= 1
        }
        return position
    }

    /// Input positions (relative to a kept element) of every index of `shape` under
    /// `strides`, in row-major order.
    static func positions(shape: [Int], strides: [Int]) -> [Int] {
        var result = [0]
        for d in 0..<shape.count {
            let size = shape[d]
            let stride = strides[d]
            var next: [Int] = []
            next.reserveCapacity(result.count * size)
            for base in result {
                for i in 0..<size { next.append(base + i * stride) }
            }
            result = next
        }
        return result
    }
}

/// Runs a ``ReductionStep`` over a ``ReductionPlan``.
///
/// Two iteration orders, chosen by where the unit-stride dimension is:
/// - **rows**: the innermost kept dimension has stride 1, so whole rows of it are folded into
///   a block of column accumulators for every reduced index (sums over non-last axes by
///   changing the loop order, not by transposing);
/// - **runs**: otherwise, each output element folds its reduced elements as runs along the
///   innermost reduced dimension (contiguous runs take the SIMD path). When there are few
///   outputs, the reduced range of each one is split across threads and the partial
///   results combined in order.
enum ReductionDriver {
    /// Columns per block in the rows order: the accumulators stay in L1.
    static let columnBlock = 512
    /// Estimated nanoseconds to fold one element.
    static let nanosecondsPerElement = 0.3

    static func run<S: ReductionStep>(
        _: S.Type, input: UnsafeRawPointer, plan: ReductionPlan, output: UnsafeMutableRawPointer
    ) {
        let src = input.assumingMemoryBound(to: S.Element.self) + plan.offset
        let dst = output.assumingMemoryBound(to: S.Result.self)
        if plan.outputCount == 0 { return }
        if plan.reducedCount == 0 {
            let value = S.finish(S.initial, count: 0)
            dst.initialize(repeating: value, count: plan.outputCount)
            return
        }
        if let inner = plan.keptStrides.last, inner == 1 {
            if S.Element.self == Float.self && S.Result.self == Int32.self, let isMax = S.argDirection {
                let (floats, indices) = (UnsafeRawPointer(src), UnsafeMutableRawPointer(dst))
                if isMax {
                    runArgRows(
                        Maximum.self, floats.assumingMemoryBound(to: Float.self), plan,
                        indices.assumingMemoryBound(to: Int32.self))
                } else {
                    runArgRows(
                        Minimum.self, floats.assumingMemoryBound(to: Float.self), plan,
                        indices.assumingMemoryBound(to: Int32.self))
                }
                return
            }
            runRows(S.self, src, plan, dst)
        } else {
            runRuns(S.self, src, plan, dst)
        }
    }

    private static func runRows<S: ReductionStep>(
        _: S.Type, _ src: UnsafePointer<S.Element>, _ plan: ReductionPlan, _ dst: UnsafeMutablePointer<S.Result>
    ) {
        let width = plan.keptShape.last!
        var outer = plan
        outer.keptShape.removeLast()
        outer.keptStrides.removeLast()
        let outerCount = plan.outputCount / width
        let reducedPositions = ReductionPlan.positions(shape: plan.reducedShape, strides: plan.reducedStrides)
        let block = Swift.min(width, columnBlock)
        let blocks = (width + block - 1) / block
        let cost = ParallelCost.perItem(nanoseconds: Double(plan.reducedCount * block) * nanosecondsPerElement)
        reducedPositions.withUnsafeBufferPointer { reducedPositions in
            parallelFor(count: outerCount * blocks, cost: cost) { items in
                let acc = UnsafeMutablePointer<S.Accumulator>.allocate(capacity: block)
                defer { acc.deallocate() }
                for item in items {
                    let row = item / blocks
                    let column = (item % blocks) * block
                    let columns = Swift.min(block, width - column)
                    let base = src + outer.keptPosition(row) + column
                    acc.initialize(repeating: S.initial, count: columns)
                    for position in reducedPositions {
                        S.accumulateRow(acc, base + position, count: columns)
                    }
                    let out = dst + row * width + column
                    for j in 0..<columns {
                        out[j] = S.finish(acc[j], count: plan.reducedCount)
                    }
                    acc.deinitialize(count: columns)
                }
            }
        }
    }

    private static func runRuns<S: ReductionStep>(
        _: S.Type, _ src: UnsafePointer<S.Element>, _ plan: ReductionPlan, _ dst: UnsafeMutablePointer<S.Result>
    ) {
        let runLength = plan.reducedShape.last ?? 1
        let runStride = plan.reducedStrides.last ?? 0
        let runStarts = ReductionPlan.positions(
            shape: Array(plan.reducedShape.dropLast()), strides: Array(plan.reducedStrides.dropLast()))
        let reducedCount = plan.reducedCount
        runStarts.withUnsafeBufferPointer { runStarts in
            /// Folds flattened reduced indices `range` of the output element at `base`.
            func fold(_ acc: inout S.Accumulator, _ base: UnsafePointer<S.Element>, _ range: Range<Int>) {
                var r = range.lowerBound
                var run = r / runLength
                var i = r % runLength
                while r < range.upperBound {
                    let length = Swift.min(runLength - i, range.upperBound - r)
                    S.accumulateRun(&acc, base + runStarts[run] + i * runStride, count: length, stride: runStride)
                    r += length
                    run += 1
                    i = 0
                }
            }

            let budget = KernelThreads.coreBudget
            let totalNanoseconds = Double(plan.outputCount * reducedCount) * nanosecondsPerElement
            if plan.outputCount < budget * 2 && budget > 1
                && totalNanoseconds > 2 * KernelThreads.serialThresholdNanoseconds
            {
                // Few, long reductions: split each one's reduced range, combine in order.
                let pieces = Swift.min(budget * 4, Swift.max(1, reducedCount / 16384))
                let pieceLength = (reducedCount + pieces - 1) / pieces
                let partials = UnsafeMutablePointer<S.Accumulator>.allocate(capacity: pieces)
                defer { partials.deallocate() }
                for o in 0..<plan.outputCount {
                    let base = src + plan.keptPosition(o)
                    partials.initialize(repeating: S.initial, count: pieces)
                    parallelFor(count: pieces, cost: .perItem(nanoseconds: Double(pieceLength) * nanosecondsPerElement))
                    {
                        range in
                        for piece in range {
                            let start = piece * pieceLength
                            let end = Swift.min(reducedCount, start + pieceLength)
                            if start < end { fold(&partials[piece], base, start..<end) }
                        }
                    }
                    var acc = partials[0]
                    for piece in 1..<pieces { acc = S.combine(acc, partials[piece]) }
                    dst[o] = S.finish(acc, count: reducedCount)
                    partials.deinitialize(count: pieces)
                }
                return
            }
            // One output element after another along the innermost kept dimension; only the
            // outer kept index needs dividing, once per row of outputs.
            let innerSize = plan.keptShape.last ?? 1
            let innerStride = plan.keptStrides.last ?? 0
            var outer = plan
            if !outer.keptShape.isEmpty {
                outer.keptShape.removeLast()
                outer.keptStrides.removeLast()
            }
            let runCount = runStarts.count
            let cost = ParallelCost.perItem(nanoseconds: Double(reducedCount) * nanosecondsPerElement + 2)
            parallelFor(count: plan.outputCount, cost: cost) { outputs in
                var o = outputs.lowerBound
                while o < outputs.upperBound {
                    let row = o / innerSize
                    let rowBase = src + outer.keptPosition(row)
                    let end = Swift.min(outputs.upperBound, (row + 1) * innerSize)
                    var base = rowBase + (o - row * innerSize) * innerStride
                    while o < end {
                        var acc = S.initial
                        for run in 0..<runCount {
                            S.accumulateRun(&acc, base + runStarts[run], count: runLength, stride: runStride)
                        }
                        dst[o] = S.finish(acc, count: reducedCount)
                        base += innerStride
                        o += 1
                    }
                }
            }
        }
    }
}
