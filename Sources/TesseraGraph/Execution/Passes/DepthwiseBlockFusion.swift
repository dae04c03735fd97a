import TesseraKernels

/// Runs a depthwise convolution together with the pointwise convolution that feeds it, the one
/// that reads it, or both, as one ``ExecutionPlan/Step/depthwiseBlock(entry:block:)`` step
/// (MobileNet's inverted residual blocks; the kernel is ``DepthwiseBlock``). The convolution that
/// feeds it may also be an image model's first layer, where the kernel layer runs one in the
/// block's bands (``DepthwiseBlockDirect``).
///
/// A stage is a `conv2d` entry and, when ``ConvolutionEpilogueFusion`` gave it one, its epilogue
/// (the stage's output is then the epilogue's fusion root). The depthwise stage's epilogue may
/// only clamp; the expansion's too; the projection's may add a residual. A tensor between two
/// stages must be read by the next stage alone (as its input, not its weight) and not be asked
/// for, and no epilogue may take a bound written on the left (its ties would need the bound's
/// bits between stages). The kernel layer decides whether the shapes are worth it on this CPU
/// (``DepthwiseBlock/fuses(inputShape:expand:depthwiseWeightShape:depthwiseParameters:project:)``);
/// the plan tries all three stages, then the expansion and the depthwise stage, then the
/// depthwise stage and the projection. Writes `depthwiseBlocks` (keyed by the last stage's
/// output), marks every other stage entry `absorbed` and takes the stages' epilogues out of
/// `convEpilogues`.
enum DepthwiseBlockFusion {
    static func run(_ state: inout PlanningState) {
        var rootOfConv: [Int: Int] = [:]
        for (root, epilogue) in state.convEpilogues { rootOfConv[epilogue.conv] = root }
        let entries = state.entries
        for d in entries.indices where state.isLive(d) {
            guard case .conv2d(let parameters) = entries[d].op, parameters.groups > 1,
                let depthwise = stage(d, in: state, rootOfConv: rootOfConv, allowResidual: false)
            else { continue }
            let expand = producer(of: d, in: state, rootOfConv: rootOfConv)
            let project = consumer(of: depthwise.output, in: state, rootOfConv: rootOfConv)
            var choices: [(ExecutionPlan.DepthwiseBlockStep.Stage?, ExecutionPlan.DepthwiseBlockStep.Stage?)] = []
            if expand != nil && project != nil { choices.append((expand, project)) }
            if expand != nil { choices.append((expand, nil)) }
            if project != nil { choices.append((nil, project)) }
            for (e, p) in choices {
                let block = ExecutionPlan.DepthwiseBlockStep(
                    input: state.inputs[(e ?? depthwise).conv][0], expand: e, depthwise: depthwise, project: p)
                guard fuses(block, in: state) else { continue }
                let stages = block.stages
                for stage in stages {
                    state.convEpilogues[stage.output] = nil
                    state.absorbed.insert(stage.conv)
                }
                for stage in stages.dropLast() { state.absorbed.insert(stage.output) }
                state.depthwiseBlocks[block.output] = block
                break
            }
        }
    }

    /// Conv entry `conv` as a stage: its output (the epilogue's root, or itself) and epilogue,
    /// when the epilogue is one the block can run (a clamp, plus a residual where allowed, no
    /// bound on the left, no activation) and the conv is not already in a block.
    static func stage(
        _ conv: Int, in state: PlanningState, rootOfConv: [Int: Int], allowResidual: Bool
    ) -> ExecutionPlan.DepthwiseBlockStep.Stage? {
        guard case .conv2d = state.entries[conv].op, state.entries[conv].type == .float32 else { return nil }
        guard let root = rootOfConv[conv] else {
            // A plain convolution step: its own output.
            guard !state.absorbed.contains(conv) else { return nil }
            return .init(conv: conv, epilogue: nil, output: conv)
        }
        guard let epilogue = state.convEpilogues[root], epilogue.conv == conv, !state.absorbed.contains(root),
            !epilogue.lowerOnLeft, !epilogue.upperOnLeft, epilogue.activation == nil, epilogue.unfused == nil,
            allowResidual || epilogue.residual == nil
        else { return nil }
        return .init(conv: conv, epilogue: epilogue, output: root)
    }

    /// The stage whose output is `d`'s input and that only `d` reads, when it is a convolution.
    static func producer(
        of d: Int, in state: PlanningState, rootOfConv: [Int: Int]
    ) -> ExecutionPlan.DepthwiseBlockStep.Stage? {
        let x = state.inputs[d][0]
        guard state.consumers[x] == [d], !state.requested.contains(x),
            state.inputs[d].dropFirst().allSatisfy({ $0 != x })
        else { return nil }
        let conv = state.convEpilogues[x]?.conv ?? x
        guard let stage = stage(conv, in: state, rootOfConv: rootOfConv, allowResidual: false), stage.output == x
        else { return nil }
        return stage
    }

    /// The convolution stage that alone reads `output` (as its input, not its weight or bias).
    static func consumer(
        of output: Int, in state: PlanningState, rootOfConv: [Int: Int]
    ) -> ExecutionPlan.DepthwiseBlockStep.Stage? {
        guard !state.requested.contains(output), state.consumers[output].count == 1 else { return nil }
        let p = state.consumers[output][0]
        guard case .conv2d = state.entries[p].op, state.inputs[p][0] == output,
            state.inputs[p].dropFirst().allSatisfy({ $0 != output })
        else { return nil }
        return stage(p, in: state, rootOfConv: rootOfConv, allowResidual: true)
    }

    /// Whether the kernel layer runs the block's shapes fused.
    static func fuses(_ block: ExecutionPlan.DepthwiseBlockStep, in state: PlanningState) -> Bool {
        // Every stage is a `conv2d` entry (``stage(_:in:rootOfConv:allowResidual:)``).
        func shapes(_ stage: ExecutionPlan.DepthwiseBlockStep.Stage) -> (
            weightShape: [Int], parameters: Conv2DParameters
        ) {
            guard case .conv2d(let parameters) = state.entries[stage.conv].op else {
                preconditionFailure("[depthwise block] stage \(stage.conv) is not a convolution")
            }
            return (state.entries[state.inputs[stage.conv][1]].shape, parameters)
        }
        let depthwise = shapes(block.depthwise)
        return DepthwiseBlock.fuses(
            inputShape: state.entries[block.input].shape, expand: block.expand.map(shapes),
            depthwiseWeightShape: depthwise.weightShape, depthwiseParameters: depthwise.parameters,
            project: block.project.map(shapes))
    }
}
