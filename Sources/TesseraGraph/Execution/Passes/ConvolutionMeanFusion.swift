import TesseraKernels

/// Computes a global average pool with the convolution before it: a float32 `reduce(.mean)`
/// over axes `[2, 3]` of a rank-4 tensor that is a convolution's output — bare, or the root of
/// the epilogue ``ConvolutionEpilogueFusion`` gave it — read by the mean alone and not asked for,
/// becomes one ``ExecutionPlan/Step/convMean(entry:mean:)`` step when the kernel layer runs
/// the convolution that way (``ConvolutionKernels/runsWithMean(inputShape:weightShape:parameters:)``:
/// a pointwise convolution on the packed micro-kernel). The convolution's output never goes to
/// memory (MobileNetV2's `[1, 1280, 7, 7]` and ResNet-50's `[1, 2048, 7, 7]` before their pools).
///
/// Runs after ``DepthwiseBlockFusion`` (a block's last stage stays in its block) and skips an
/// epilogue with a bound written on the left (its ties would need the bound's bits before the
/// mean). Writes `convMeans` (keyed by the mean), marks the convolution and the epilogue's root
/// `absorbed` and takes the epilogue out of `convEpilogues`.
enum ConvolutionMeanFusion {
    static func run(_ state: inout PlanningState) {
        let entries = state.entries
        for mean in entries.indices where state.isLive(mean) {
            guard case .reduce(.mean, let axes) = entries[mean].op, axes == [2, 3], entries[mean].type == .float32,
                !state.absorbed.contains(mean), state.reduceProducer[mean] == nil, state.concatParts[mean] == nil
            else { continue }
            let x = state.inputs[mean][0]
            guard entries[x].shape.count == 4, entries[x].type == .float32, state.consumers[x] == [mean],
                !state.requested.contains(x), !state.absorbed.contains(x), state.depthwiseBlocks[x] == nil,
                state.rowGroups[x] == nil
            else { continue }
            let epilogue: ExecutionPlan.ConvolutionEpilogue
            if let fused = state.convEpilogues[x] {
                guard !fused.lowerOnLeft, !fused.upperOnLeft, fused.activation == nil, fused.unfused == nil,
                    fused.columnBias == nil
                else { continue }
                epilogue = fused
            } else if case .conv2d = entries[x].op {
                epilogue = ExecutionPlan.ConvolutionEpilogue(conv: x, residual: nil, lower: nil, upper: nil)
            } else {
                continue
            }
            let conv = epilogue.conv
            guard case .conv2d(let parameters) = entries[conv].op,
                ConvolutionKernels.runsWithMean(
                    inputShape: entries[state.inputs[conv][0]].shape,
                    weightShape: entries[state.inputs[conv][1]].shape, parameters: parameters)
            else { continue }
            state.convMeans[mean] = ExecutionPlan.ConvolutionMean(root: x, epilogue: epilogue)
            state.convEpilogues[x] = nil
            state.absorbed.insert(conv)
            state.absorbed.insert(x)
        }
    }
}
