import TesseraKernels

/// A compiled schedule for one graph structure: which entries alias which (common
/// subexpressions and identities), which element-wise chains run as one fused program, which
/// steps absorb their producers, the order of the steps and when each intermediate dies. The
/// initializer runs the planner's passes (`Execution/Passes/`) in order. Plans are cached by
/// structure, so materializing the same computation on new inputs of the same shapes skips
/// all of this.
final class ExecutionPlan: @unchecked Sendable {
    /// One unit of work: plain integers only. What a step needs that holds references (programs,
    /// leaf lists, epilogues, row groups) is in ``tables``, at the index the case carries.
    ///
    /// A multi-payload enum keeps its case in spare bits of its payloads, including the high
    /// bits of a pointer it holds, and LeakSanitizer does not recognise such a pointer: a plan
    /// kept in a plan cache was reported as a leak of the array behind it (a `package` fuzz
    /// finding). `PlanStepLeakVisibilityTests` checks the enum stays plain data.
    enum Step {
        /// `entry`'s value is a new layout over its input's storage (or a compact copy).
        case view(entry: Int)
        /// A fused element-wise program (``StepTables/programs``) writes `entry`; its leaves
        /// are its inputs in order.
        case fused(entry: Int, program: Int)
        /// One kernel computes `entry` from its inputs.
        case kernel(entry: Int)
        /// A reduction over trailing axes of a fused program's result: the program runs a
        /// chunk of leading-axis rows into a cache-sized scratch block, which is reduced
        /// before the next chunk, so the program's result never goes to memory.
        case fusedReduce(entry: Int, program: Int, producer: Int)
        /// A softmax (or log-softmax) along the last axis of a fused program's result, run the
        /// same way: chunks of leading-axis rows go through the program into a scratch block
        /// and straight on through the softmax kernel.
        case fusedSoftmax(entry: Int, program: Int, producer: Int)
        /// A reduction over trailing axes of a reshaped concatenation along axis 0: each part
        /// holds whole rows of the reduction, so each part is reduced where it lies and the
        /// concatenation is never copied. `parts` indexes ``StepTables/partLists``.
        case reduceConcat(entry: Int, parts: Int)
        /// A convolution whose only reader is a fused program computing
        /// `min(max(conv + residual, lower), upper)` (the residual, and either bound, may be
        /// absent), or a `matmul` whose only reader computes `gelu` or `silu` of it (plus a bias;
        /// ``LinearActivationFusion``): the kernel writes `entry`, the program's result, adding
        /// the residual and applying the clamp (and activation) as it finishes each part of the
        /// output. `epilogue` indexes ``StepTables/epilogues``.
        case convEpilogue(entry: Int, epilogue: Int)
        /// A fused program and the per-row reductions it reads, computed a chunk of rows at a
        /// time in one parallel loop (``RowFusion``): `entry` is the program's root; `group`
        /// indexes ``StepTables/rowGroups``.
        case rowFused(entry: Int, group: Int)
        /// A depthwise convolution with the pointwise convolution before it, after it, or both,
        /// run band by band as one kernel (``DepthwiseBlockFusion``): `entry` is the last
        /// stage's output; `block` indexes ``StepTables/depthwiseBlocks``.
        case depthwiseBlock(entry: Int, block: Int)
        /// A global average pool (a mean over axes 2 and 3) of a convolution's output, the
        /// convolution run with it (``ConvolutionMeanFusion``): `entry` is the mean; `mean`
        /// indexes ``StepTables/convMeans``.
        case convMean(entry: Int, mean: Int)

        var entry: Int {
            switch self {
            case .view(let entry), .fused(let entry, _), .kernel(let entry), .fusedReduce(let entry, _, _),
                .fusedSoftmax(let entry, _, _), .reduceConcat(let entry, _), .convEpilogue(let entry, _),
                .rowFused(let entry, _), .depthwiseBlock(let entry, _), .convMean(let entry, _):
                return entry
            }
        }
    }

    /// What the steps need that holds references, each at the index its ``Step`` case carries.
    struct StepTables {
        /// A fused program and the entries it reads, in the order of its `.input` instructions.
        struct Program {
            var program: FusedProgram
            var leaves: [Int]
        }

        /// The programs of `.fused`, `.fusedReduce` and `.fusedSoftmax` steps.
        var programs: [Program] = []
        /// The parts of `.reduceConcat` steps.
        var partLists: [[Int]] = []
        /// The epilogues of `.convEpilogue` steps.
        var epilogues: [ConvolutionEpilogue] = []
        /// The groups of `.rowFused` steps.
        var rowGroups: [RowGroup] = []
        /// The blocks of `.depthwiseBlock` steps.
        var depthwiseBlocks: [DepthwiseBlockStep] = []
        /// The convolutions of `.convMean` steps.
        var convMeans: [ConvolutionMean] = []
    }

    /// What a convolution epilogue step adds to and clamps its convolution's output with (and,
    /// for a `matmul`, the activation it then applies).
    struct ConvolutionEpilogue {
        /// The convolution entry (absorbed: it has no step of its own).
        var conv: Int
        /// An entry of the convolution's shape, added to each output.
        var residual: Int?
        /// For a `matmul` with a result-shaped `residual`: a bias of one value per column added
        /// before it (`(a · b + columnBias) + residual`: a linear layer and the residual
        /// connection after it).
        var columnBias: Int? = nil
        /// Single-element float32 entries, read at run time (plans are shared by graphs whose
        /// constants differ).
        var lower: Int?
        var upper: Int?
        /// Whether the graph wrote the bound as the left operand (`max(lower, x)`,
        /// `min(upper, x)`): on a tie the element-wise op gives the bound, so the step gives
        /// outputs equal to a zero bound that bound's bits.
        var lowerOnLeft = false
        var upperOnLeft = false
        /// For a `matmul`: the activation applied after the clamp (``LinearActivationFusion``).
        var activation: LinearActivation?
        /// The single-element float32 entries the activation's expression reads, with the values
        /// they must hold for the fused kernel to compute it (checked at run time).
        var activationConstants: [(entry: Int, value: Float)] = []
        /// The program the step replaces and its leaves, run after the bare product when an
        /// activation constant differs.
        var unfused: (program: FusedProgram, leaves: [Int])?
    }

    /// The convolution a ``Step/convMean(entry:mean:)`` step runs with its global average pool.
    struct ConvolutionMean {
        /// The entry the mean reads: the epilogue's fusion root, or the convolution itself
        /// (absorbed either way: it has no step and no value).
        var root: Int
        /// The convolution (``ConvolutionEpilogue/conv``) and what its epilogue adds and clamps
        /// before the mean; no residual and no bounds for a bare convolution.
        var epilogue: ConvolutionEpilogue
    }

    let entries: [GraphSnapshot.Entry]
    let outputs: [Int]
    /// For every entry, the entry whose value it shares (itself unless merged away).
    let canonical: [Int]
    let steps: [Step]
    /// The steps' programs, epilogues, part lists and row groups.
    let tables: StepTables
    /// For every step, the intermediates whose last reader it is, freed once it has run.
    let releases: [[Int]]
    /// For every step, the dying inputs a fused program may write its result over.
    let inPlaceCandidates: [[Int]]
    /// For every step, the memo that keeps a fused program's run plan between runs.
    let memos: [FusedPlanMemo?]
    /// For every depthwise block (``StepTables/depthwiseBlocks``), the kernel operands its last
    /// run resolved from its weights and biases.
    let depthwiseBlockMemos: [DepthwiseBlockMemo]
    /// The steps that run a kernel or a program (all but views).
    let kernelCount: Int
    /// Counts for ``PlanStatistics`` and ``PlanDescription``.
    let fusedGroups: Int
    let fusedNodes: Int
    let convEpilogues: Int
    let mergedEntries: Int
    /// The entries merged into an earlier one (each gets its canonical entry's value).
    let mergedEntryList: [Int]
    let peakIntermediates: Int
    /// The entries that get a value of their own while the plan runs and are not requested
    /// (kernel, fused and view steps): the intermediates a run can hand to nodes that
    /// something outside the graph still holds (``GraphExecutor``'s held intermediates).
    let intermediateSteps: [Int]
    /// For every entry, how many times the graph's entries list it as an input.
    let readerCounts: [Int]
    /// The most bytes the plan's results hold at once while it runs
    /// (``peakBytes(entries:steps:releases:)``): what a run reserves in the buffer pool.
    let plannedPeakBytes: Int
    /// For every entry, the row-major layout of its shape: the layout of a step's new result,
    /// made once here rather than on every run.
    let contiguousLayouts: [StridedLayout]

    /// Compiles the plan for `entries` (in topological order) that yields the values of `outputs`.
    ///
    /// The passes run in this order over one ``PlanningState``; each one's doc comment says what
    /// it rewrites and which of the state's fields it writes.
    init(entries: [GraphSnapshot.Entry], outputs: [Int]) {
        var state = PlanningState(entries: entries, outputs: outputs)
        CommonSubexpressionElimination.run(&state)
        ElementwiseFusion.run(&state)
        ReductionStreaming.run(&state)
        RowFusion.run(&state)
        SoftmaxAbsorption.run(&state)
        ConcatReduction.run(&state)
        ConvolutionEpilogueFusion.run(&state)
        LinearActivationFusion.run(&state)
        DepthwiseBlockFusion.run(&state)
        ConvolutionMeanFusion.run(&state)
        StepSchedule.run(&state)
        MemoryPlan.run(&state)
        InPlaceReuse.run(&state)

        self.entries = entries
        self.outputs = outputs
        canonical = state.canonical
        steps = state.steps
        tables = state.tables
        memos = state.steps.map { if case .fused = $0 { FusedPlanMemo() } else { nil } }
        depthwiseBlockMemos = state.tables.depthwiseBlocks.map { _ in DepthwiseBlockMemo() }
        kernelCount = state.steps.filter { if case .view = $0 { false } else { true } }.count
        releases = state.releases
        inPlaceCandidates = state.inPlaceCandidates
        peakIntermediates = state.peakIntermediates
        mergedEntryList = entries.indices.filter { !state.isLive($0) }
        mergedEntries = mergedEntryList.count
        // Roots of programs a convolution runs as its epilogue, alone or inside a depthwise block.
        var epilogueRoots = Set(state.convEpilogues.keys)
        for block in state.depthwiseBlocks.values {
            for stage in block.stages where stage.epilogue != nil { epilogueRoots.insert(stage.output) }
        }
        for mean in state.convMeans.values where mean.root != mean.epilogue.conv { epilogueRoots.insert(mean.root) }
        fusedGroups = state.groups.count - epilogueRoots.count
        fusedNodes = state.groups.filter { !epilogueRoots.contains($0.key) }.values.reduce(0) { $0 + $1.size }
        convEpilogues = epilogueRoots.count
        let requested = Set(outputs)
        intermediateSteps = state.steps.map(\.entry).filter { !requested.contains($0) }
        var readers = [Int](repeating: 0, count: entries.count)
        for entry in entries { for input in entry.inputs { readers[input] += 1 } }
        readerCounts = readers
        plannedPeakBytes = Self.peakBytes(entries: entries, steps: state.steps, releases: state.releases)
        contiguousLayouts = entries.map { StridedLayout(contiguous: $0.shape) }
    }
}
