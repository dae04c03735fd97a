/// What a compiled plan will do, step by step: the planner's structure, for tests that check
/// "this graph becomes these steps" (tinygrad's `check_schedule`) without running it.
///
/// ```swift
/// let y = Node(.reduce(.sum, axes: [1]), inputs: [Node(.unary(.exp), inputs: [x])])
/// GraphExecutor.describePlan([y]).steps   // [.fusedReduce]
/// ```
package struct PlanDescription: Sendable, Equatable, CustomStringConvertible {
    /// The kind of one step (``ExecutionPlan/Step`` without its operands).
    package enum StepKind: String, Sendable, Equatable {
        case view, fused, kernel, fusedReduce, fusedSoftmax, reduceConcat, convEpilogue, rowFused, depthwiseBlock
        case convMean
    }

    /// The steps in the order they run.
    package var steps: [StepKind]
    /// The graph ops of the kernel steps, in order (`matmul`, `concat(axis: 0)`, …).
    package var kernelOps: [String]
    /// Element-wise graph entries computed inside fused programs (including programs streamed
    /// into a reduction or softmax, not those a convolution epilogue runs).
    package var fusedNodes: Int
    /// Entries merged into an earlier entry: common subexpressions and identity ops.
    package var mergedEntries: Int
    /// The most intermediate buffers alive at once (``MemoryPlan``).
    package var peakIntermediates: Int
    /// Fused steps that may write their result over a dying input (``InPlaceReuse``).
    package var inPlaceSteps: Int
    /// Reductions of row-fused steps that sum squared deviations from an earlier reduction
    /// (`mean((x - mean(x))²)`) a row at a time, without running their program (``RowFusion``).
    package var centeredSquareMembers = 0

    package var description: String {
        "[\(steps.map(\.rawValue).joined(separator: ", "))], kernels \(kernelOps), \(fusedNodes) fused ops, "
            + "\(mergedEntries) merged, peak \(peakIntermediates) intermediates, \(inPlaceSteps) in place"
    }
}

extension ExecutionPlan {
    /// The plan's structure.
    var planDescription: PlanDescription {
        PlanDescription(
            steps: steps.map { step in
                switch step {
                case .view: .view
                case .fused: .fused
                case .kernel: .kernel
                case .fusedReduce: .fusedReduce
                case .fusedSoftmax: .fusedSoftmax
                case .reduceConcat: .reduceConcat
                case .convEpilogue: .convEpilogue
                case .rowFused: .rowFused
                case .depthwiseBlock: .depthwiseBlock
                case .convMean: .convMean
                }
            },
            kernelOps: steps.compactMap { step in
                if case .kernel(let entry) = step { return "\(entries[entry].op)" }
                return nil
            },
            fusedNodes: fusedNodes, mergedEntries: mergedEntries, peakIntermediates: peakIntermediates,
            inPlaceSteps: inPlaceCandidates.filter { !$0.isEmpty }.count,
            centeredSquareMembers: steps.reduce(0) { count, step in
                guard case .rowFused(_, let group) = step else { return count }
                return count + tables.rowGroups[group].members.filter { $0.centeredSquares != nil }.count
            })
    }
}
