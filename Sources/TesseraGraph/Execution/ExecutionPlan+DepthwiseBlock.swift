import TesseraKernels

extension ExecutionPlan {
    /// The convolutions a ``Step/depthwiseBlock(entry:block:)`` step runs as one
    /// ``DepthwiseBlock`` (``DepthwiseBlockFusion``): a depthwise convolution and the pointwise
    /// convolution before it, after it, or both.
    struct DepthwiseBlockStep {
        /// One convolution of the block.
        struct Stage {
            /// The `conv2d` entry (absorbed: it has no step of its own).
            var conv: Int
            /// Its bias, clamp and (the projection's only) residual, or `nil` for none.
            var epilogue: ConvolutionEpilogue?
            /// The entry the stage computes: the epilogue's root, or `conv` itself.
            var output: Int
        }

        /// The entry the first stage convolves.
        var input: Int
        var expand: Stage?
        var depthwise: Stage
        var project: Stage?

        /// The stages in the order they run.
        var stages: [Stage] { [expand, depthwise, project].compactMap { $0 } }

        /// The entry the step writes: the last stage's output.
        var output: Int { (project ?? depthwise).output }

        /// What the step reads: the block's input, every stage's weight and bias, and the
        /// projection's residual and the stages' bounds.
        func reads(_ inputs: [[Int]]) -> [Int] {
            var read = [input]
            for stage in stages {
                read += inputs[stage.conv].dropFirst()
                if let e = stage.epilogue { read += [e.residual, e.lower, e.upper].compactMap { $0 } }
            }
            return read
        }
    }

    /// Runs a depthwise block step: ``DepthwiseBlock/run(input:inputShape:expand:direct:depthwise:project:residual:output:bandRows:coresAreFar:)``
    /// with each pointwise weight's prepared panels, or, when a stage's clamp has a NaN bound
    /// this run (bounds are read at run time), the stages one after another as their own steps
    /// would. The kernel operands come from `memo` when this run's weights and biases are the
    /// storages the last run resolved them from.
    func runDepthwiseBlock(
        _ block: DepthwiseBlockStep, memo: DepthwiseBlockMemo, values: [TensorValue?]
    ) -> TensorValue {
        func value(_ i: Int) -> TensorValue { values[canonical[i]]! }
        func clamp(_ stage: DepthwiseBlockStep.Stage?) -> ConvolutionClamp { stage?.epilogue?.clamp(values) ?? .none }
        let (expandClamp, depthwiseClamp, projectClamp) = (
            clamp(block.expand), clamp(block.depthwise), clamp(block.project)
        )
        if expandClamp.hasNaNBound || depthwiseClamp.hasNaNBound || projectClamp.hasNaNBound {
            var current = value(block.input)
            for stage in block.stages {
                let conv = entries[stage.conv]
                current = runKernel(
                    stage.conv, inputs: [current] + conv.inputs.dropFirst().map(value),
                    residual: stage.epilogue?.residual.map(value), clamp: clamp(stage))
            }
            return current
        }
        let input = value(block.input).compacted()
        // The stages' kernel operands: the memo's when the weights and biases are the storages
        // they were last run (a model's constants), else resolved now.
        var held: [TensorValue] = []
        var operands: DepthwiseBlockMemo.Operands
        if let remembered = memo.operands(matching: values) {
            operands = remembered
        } else {
            (operands, held) = resolveOperands(block, inputShape: input.layout.shape, values: values)
            // Operands that point into a compacted copy hold only for this run.
            if held.isEmpty { memo.remember(operands) }
        }
        operands.expand?.clamp = expandClamp
        operands.direct?.clamp = expandClamp
        operands.depthwise.clamp = depthwiseClamp
        operands.project?.clamp = projectClamp
        let residual = block.project?.epilogue?.residual.map { value($0).compacted() }
        let result = entries[block.output]
        let out = TensorStorage.allocate(count: result.shape.reduce(1, *), type: result.type)
        DepthwiseBlock.run(
            input: input.floats, inputShape: input.layout.shape, expand: operands.expand, direct: operands.direct,
            depthwise: operands.depthwise, project: operands.project, residual: residual?.floats,
            output: out.pointer.assumingMemoryBound(to: Float.self))
        withExtendedLifetime((input, held, residual)) {}
        return TensorValue(storage: out, layout: contiguousLayouts[block.output], type: result.type)
    }

    /// A depthwise block's kernel operands from this run's weights and biases (clamps left
    /// `.none`: they are read every run), with where each points, and the compacted copies they
    /// point into (empty when every weight and bias was compact already): the caller holds those
    /// until the kernel has run.
    private func resolveOperands(
        _ block: DepthwiseBlockStep, inputShape: [Int], values: [TensorValue?]
    ) -> (DepthwiseBlockMemo.Operands, held: [TensorValue]) {
        var sources: [DepthwiseBlockMemo.Source] = []
        var held: [TensorValue] = []
        // A compact weight or bias, and where it came from.
        func compact(_ entry: Int) -> TensorValue {
            let index = canonical[entry]
            let original = values[index]!
            let value = original.compacted()
            if value.storage === original.storage {
                sources.append(.init(value: index, storage: value.storage, offset: value.layout.offset))
            } else {
                held.append(value)
            }
            return value
        }
        // A stage's parameters, compact weight and bias.
        func operands(of stage: DepthwiseBlockStep.Stage) -> (Conv2DParameters, TensorValue, TensorValue?) {
            guard case .conv2d(let parameters) = entries[stage.conv].op else {
                kernelFailure("[depthwise block] \(entries[stage.conv].op) is not a convolution")
            }
            let inputs = entries[stage.conv].inputs
            return (parameters, compact(inputs[1]), inputs.count > 2 ? compact(inputs[2]) : nil)
        }
        func pointwise(
            _ operands: (Conv2DParameters, TensorValue, TensorValue?)?, inputShape: [Int]
        ) -> DepthwiseBlockPointwise? {
            guard let (parameters, weight, bias) = operands else { return nil }
            let prepared = Conv2DRule.preparedWeights(weight, inputShape: inputShape, parameters: parameters)
            return DepthwiseBlockPointwise(
                weights: weight.floats, outputChannels: weight.layout.shape[0], inputChannels: weight.layout.shape[1],
                packed: prepared?.packed, bias: bias?.floats, clamp: .none)
        }
        let expandOperands = block.expand.map(operands(of:))
        let (parameters, dwWeight, dwBias) = operands(of: block.depthwise)
        let projectOperands = block.project.map(operands(of:))
        // The first stage is a pointwise expansion or an image model's first layer, as
        // `DepthwiseBlock.fuses` took it when the plan was made.
        var expand: DepthwiseBlockPointwise?
        var direct: DepthwiseBlockDirect?
        if let (parameters, weight, bias) = expandOperands,
            DepthwiseBlockDirect.fuses(inputShape: inputShape, weightShape: weight.layout.shape, parameters: parameters)
        {
            let prepared = Conv2DRule.preparedWeights(weight, inputShape: inputShape, parameters: parameters)
            direct = DepthwiseBlockDirect(
                weights: weight.floats, weightShape: weight.layout.shape, parameters: parameters,
                packed: prepared?.packed, bias: bias?.floats, clamp: .none)
        } else {
            expand = pointwise(expandOperands, inputShape: inputShape)
        }
        let depthwise = DepthwiseBlockDepthwise(
            weights: dwWeight.floats, weightShape: dwWeight.layout.shape, parameters: parameters,
            bias: dwBias?.floats, clamp: .none)
        let project = pointwise(projectOperands, inputShape: entries[block.depthwise.output].shape)
        return (.init(sources: sources, expand: expand, direct: direct, depthwise: depthwise, project: project), held)
    }
}
