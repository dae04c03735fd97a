/// Emits the plan's steps in topological order.
///
/// Every live entry that is not a constant gets one step unless an earlier pass absorbed it
/// or it is computed inside a fused program: a depthwise block, a convolution with its mean, a
/// row-fused group, a convolution epilogue, a streamed reduction or softmax, a reduction over concatenated parts, a fused
/// program (for a fusion root), a view, or a kernel. Writes `steps` and `tables`.
enum StepSchedule {
    static func run(_ state: inout PlanningState) {
        let entries = state.entries
        for i in entries.indices where state.isLive(i) && entries[i].op != .constant {
            let step: ExecutionPlan.Step
            if let block = state.depthwiseBlocks[i] {
                step = .depthwiseBlock(entry: i, block: state.tables.depthwiseBlocks.count)
                state.tables.depthwiseBlocks.append(block)
            } else if let mean = state.convMeans[i] {
                step = .convMean(entry: i, mean: state.tables.convMeans.count)
                state.tables.convMeans.append(mean)
            } else if let group = state.rowGroups[i] {
                step = .rowFused(entry: i, group: state.tables.rowGroups.count)
                state.tables.rowGroups.append(group)
            } else if let epilogue = state.convEpilogues[i] {
                step = .convEpilogue(entry: i, epilogue: state.tables.epilogues.count)
                state.tables.epilogues.append(epilogue)
            } else if let p = state.reduceProducer[i], let group = state.groups[p] {
                step = .fusedReduce(entry: i, program: state.tables.programs.count, producer: p)
                state.tables.programs.append(.init(program: group.program, leaves: group.leaves))
            } else if let parts = state.concatParts[i] {
                step = .reduceConcat(entry: i, parts: state.tables.partLists.count)
                state.tables.partLists.append(parts)
            } else if state.absorbed.contains(i) && !state.fusible(i) {
                continue
            } else if let p = state.softmaxProducer[i], let group = state.groups[p] {
                step = .fusedSoftmax(entry: i, program: state.tables.programs.count, producer: p)
                state.tables.programs.append(.init(program: group.program, leaves: group.leaves))
            } else if state.fusible(i) {
                guard let group = state.groups[i], !state.absorbed.contains(i) else { continue }
                step = .fused(entry: i, program: state.tables.programs.count)
                state.tables.programs.append(.init(program: group.program, leaves: group.leaves))
            } else if entries[i].op.isView {
                step = .view(entry: i)
            } else {
                step = .kernel(entry: i)
            }
            state.steps.append(step)
        }
    }
}
