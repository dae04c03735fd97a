import TesseraKernels

/// What the planner's passes share while one ``ExecutionPlan`` is compiled.
///
/// The passes run in the order ``ExecutionPlan/init(entries:outputs:)`` lists them. Each reads
/// what the passes before it wrote and fills in its own fields; the field comments name the
/// pass that writes them. Entries are indices into `entries` (topological order), and every
/// entry a pass looks at is *live*: not merged into an earlier one.
struct PlanningState {
    /// A fused element-wise program rooted at an entry, and the entries it reads.
    struct FusedGroup {
        var program: FusedProgram
        /// The program's inputs, in the order of its `.input` instructions.
        var leaves: [Int]
        /// The element-wise graph entries the program computes.
        var size: Int
    }

    let entries: [GraphSnapshot.Entry]
    let outputs: [Int]

    /// For every entry, the entry whose value it shares (itself unless merged away).
    /// Written by ``CommonSubexpressionElimination``.
    var canonical: [Int]
    /// For every entry, its inputs as canonical entries. Written by
    /// ``CommonSubexpressionElimination``.
    var inputs: [[Int]]
    /// For every live entry, the live entries that read it (each once). Written by
    /// ``CommonSubexpressionElimination``.
    var consumers: [[Int]]
    /// The canonical entries the caller asked for.
    var requested: Set<Int> = []

    /// The entries whose value a fused program writes to memory. Written by ``ElementwiseFusion``.
    var isRoot: [Bool]
    /// The fused program of every fusion root. Written by ``ElementwiseFusion``.
    var groups: [Int: FusedGroup] = [:]

    /// Entries that run inside another entry's step and so get no step of their own. Written by
    /// ``ReductionStreaming``, ``RowFusion``, ``SoftmaxAbsorption``, ``ConcatReduction`` and
    /// ``ConvolutionEpilogueFusion``, ``DepthwiseBlockFusion`` and ``ConvolutionMeanFusion``.
    var absorbed = Set<Int>()
    /// For a reduction, the fusion root streamed into it. Written by ``ReductionStreaming``.
    var reduceProducer: [Int: Int] = [:]
    /// For a softmax, the fusion root streamed into it. Written by ``SoftmaxAbsorption``.
    var softmaxProducer: [Int: Int] = [:]
    /// For a fusion root, the per-row reductions and programs computed with it a chunk of rows
    /// at a time. Written by ``RowFusion``.
    var rowGroups: [Int: ExecutionPlan.RowGroup] = [:]
    /// For a reduction, the concatenated parts it reduces in place. Written by ``ConcatReduction``.
    var concatParts: [Int: [Int]] = [:]
    /// For a fusion root, the convolution that computes it. Written by
    /// ``ConvolutionEpilogueFusion``.
    var convEpilogues: [Int: ExecutionPlan.ConvolutionEpilogue] = [:]
    /// For the last stage's output of a depthwise block, the block. Written by
    /// ``DepthwiseBlockFusion``.
    var depthwiseBlocks: [Int: ExecutionPlan.DepthwiseBlockStep] = [:]
    /// For a global average pool, the convolution computed with it. Written by
    /// ``ConvolutionMeanFusion``.
    var convMeans: [Int: ExecutionPlan.ConvolutionMean] = [:]

    /// The steps in topological order. Written by ``StepSchedule``.
    var steps: [ExecutionPlan.Step] = []
    /// The steps' programs, epilogues, part lists and row groups. Written by ``StepSchedule``.
    var tables = ExecutionPlan.StepTables()
    /// For every entry, the index of the last step that reads it (`-1` when none does). Written
    /// by ``MemoryPlan``.
    var lastUse: [Int]
    /// For every entry, whether its value is an intermediate the plan may free or overwrite.
    /// Written by ``MemoryPlan``.
    var isTemporary: [Bool]
    /// For every step, the intermediates whose last reader it is: their buffers go back to the
    /// pool once it has run. Written by ``MemoryPlan``.
    var releases: [[Int]] = []
    /// The most intermediates alive at once (each from the step that writes it to its last
    /// reader). Written by ``MemoryPlan``.
    var peakIntermediates = 0
    /// For every step, the inputs a fused program may write its result over (they die at the
    /// step and have the result's type and shape). Written by ``InPlaceReuse``.
    var inPlaceCandidates: [[Int]] = []

    init(entries: [GraphSnapshot.Entry], outputs: [Int]) {
        let n = entries.count
        self.entries = entries
        self.outputs = outputs
        canonical = Array(0..<n)
        inputs = entries.map(\.inputs)
        consumers = [[Int]](repeating: [], count: n)
        isRoot = [Bool](repeating: false, count: n)
        lastUse = [Int](repeating: -1, count: n)
        isTemporary = [Bool](repeating: false, count: n)
    }

    /// Whether entry `i` keeps its own value (it was not merged into an earlier entry).
    func isLive(_ i: Int) -> Bool { canonical[i] == i }

    /// Whether entry `i` can be computed inside a fused program: an element-wise op, or a
    /// broadcast (the identity inside a program).
    func fusible(_ i: Int) -> Bool {
        if case .broadcast = entries[i].op { return true }
        return entries[i].op.isElementwise
    }

    /// The entries `step` reads: a program's leaves, a convolution epilogue's convolution inputs
    /// and extra operands, or the entry's own inputs. The one read-set of a step, used for
    /// lifetimes and buffer releases.
    func reads(_ step: ExecutionPlan.Step) -> [Int] {
        switch step {
        case .fused(_, let program), .fusedReduce(_, let program, _), .fusedSoftmax(_, let program, _):
            return tables.programs[program].leaves
        case .reduceConcat(_, let parts):
            return tables.partLists[parts]
        case .rowFused(_, let group):
            return tables.rowGroups[group].reads
        case .convEpilogue(_, let index):
            return tables.epilogues[index].reads(inputs)
        case .convMean(_, let index):
            return tables.convMeans[index].epilogue.reads(inputs)
        case .depthwiseBlock(_, let block):
            return tables.depthwiseBlocks[block].reads(inputs)
        case .view(let entry), .kernel(let entry):
            return inputs[entry]
        }
    }

    /// The fusion root that `i` (a reduction over `axes` or a softmax along `axes[0]`) can stream
    /// chunk by chunk: `i`'s input when it is a fusion root that only `i` reads, the caller did
    /// not ask for and ``RowFusion`` did not make a row-fused step, and `axes` are the trailing
    /// axes from 1 or later.
    func streamableProducer(of i: Int, axes: [Int]) -> Int? {
        let p = inputs[i][0]
        let rank = entries[p].shape.count
        guard groups[p] != nil, rowGroups[p] == nil, !requested.contains(p), consumers[p] == [i],
            let first = axes.first, first >= 1,
            axes == Array(first..<rank)
        else { return nil }
        return p
    }
}

extension ExecutionPlan.ConvolutionEpilogue {
    /// What a step running this epilogue's convolution reads: the convolution's inputs and the
    /// column bias, residual and bounds.
    func reads(_ inputs: [[Int]]) -> [Int] {
        inputs[conv] + [columnBias, residual, lower, upper].compactMap { $0 }
    }
}
