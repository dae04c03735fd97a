import TesseraKernels

extension ExecutionPlan {
    /// Runs a ``Step/convMean(entry:mean:)`` step: ``ConvolutionKernels/conv2dMeans(input:inputShape:weights:weightShape:bias:residual:clamp:parameters:packedWeights:output:)``
    /// with the weight's prepared panels, or, when the clamp has a NaN bound this run (bounds
    /// are read at run time), the convolution and the mean one after another as their own steps
    /// would.
    func runConvolutionMean(_ mean: ConvolutionMean, entry index: Int, values: [TensorValue?]) -> TensorValue {
        func value(_ i: Int) -> TensorValue { values[canonical[i]]! }
        let epilogue = mean.epilogue
        let clamp = epilogue.clamp(values)
        let conv = entries[epilogue.conv]
        let residual = epilogue.residual.map { value($0).compacted() }
        if clamp.hasNaNBound {
            let product = runKernel(epilogue.conv, inputs: conv.inputs.map(value), residual: residual, clamp: clamp)
            return runKernel(index, inputs: [product])
        }
        guard case .conv2d(let parameters) = conv.op else {
            kernelFailure("[conv2d + mean] \(conv.op) is not a convolution")
        }
        let input = value(conv.inputs[0]).compacted()
        let weight = value(conv.inputs[1]).compacted()
        let bias = conv.inputs.count > 2 ? value(conv.inputs[2]).compacted() : nil
        let prepared = Conv2DRule.preparedWeights(weight, inputShape: input.layout.shape, parameters: parameters)
        let result = entries[index]
        let out = TensorStorage.allocate(count: result.shape.reduce(1, *), type: result.type)
        ConvolutionKernels.conv2dMeans(
            input: input.floats, inputShape: input.layout.shape, weights: weight.floats,
            weightShape: weight.layout.shape, bias: bias?.floats, residual: residual?.floats, clamp: clamp,
            parameters: parameters, packedWeights: prepared?.packed,
            output: out.pointer.assumingMemoryBound(to: Float.self))
        withExtendedLifetime((input, weight, bias, residual)) {}
        return TensorValue(storage: out, layout: contiguousLayouts[index], type: result.type)
    }
}
