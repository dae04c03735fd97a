import TesseraKernels

/// ``GraphOp/conv2d(_:)``: a 2-D convolution of a `float32` NCHW input with an OIHW weight and
/// an optional bias `[O]`; the geometry rule is ``Conv2DParameters``'s. A step may carry a
/// fused epilogue (a residual and a clamp; see ``KernelCall``).
package enum Conv2DRule: OpRule {
    package static var kind: OpKind { .kernel }

    package static func infer(_ op: GraphOp, _ inputs: [Node]) throws(OpError) -> ([Int], KernelScalarType) {
        guard case .conv2d(let parameters) = op else { throw OpError("[\(op)] is not a convolution") }
        try OpError.require(
            inputs.count == 2 || inputs.count == 3, "[conv2d] takes 2 or 3 inputs, got \(inputs.count)")
        try OpError.require(
            inputs.allSatisfy { $0.type == .float32 },
            "[conv2d] needs float32 tensors, got \(inputs.map { "\($0.type)" })")
        let shape = try parameters.checkedOutputShape(inputShape: inputs[0].shape, weightShape: inputs[1].shape)
        if inputs.count == 3 {
            try OpError.require(
                inputs[2].shape == [shape[1]],
                "[conv2d] bias \(inputs[2].shape) must have one value per output channel (\(shape[1]))")
        }
        return (shape, .float32)
    }

    /// The kernel takes plain pointers: every operand arrives row-major.
    package static func needsRowMajor(_ op: GraphOp, operand index: Int) -> Bool { true }

    package static func run(_ op: GraphOp, _ call: KernelCall) {
        guard case .conv2d(let parameters) = op else { kernelFailure("[execute] \(op) is not a convolution") }
        let (input, weight) = (call.inputs[0], call.inputs[1])
        let prepared = preparedWeights(weight, inputShape: input.layout.shape, parameters: parameters)
        ConvolutionKernels.conv2d(
            input: input.floats, inputShape: input.layout.shape, weights: weight.floats,
            weightShape: weight.layout.shape, bias: call.inputs.count > 2 ? call.inputs[2].floats : nil,
            output: call.floatOutput, parameters: parameters, residual: call.residual?.floats, clamp: call.clamp,
            packedWeights: prepared?.packed, winogradFilter: prepared?.winograd)
    }

    /// Makes a constant weight's prepared form at load, as ``run(_:_:)`` looks it up
    /// (``preparedWeights(_:inputShape:parameters:)``).
    package static func prepare(_ op: GraphOp, operands: [TensorValue?], shapes: [[Int]]) {
        guard case .conv2d(let parameters) = op, operands.count > 1, let weight = operands[1] else { return }
        _ = preparedWeights(weight, inputShape: shapes[0], parameters: parameters)
    }

    /// The elements of the weight's prepared form: a Winograd F(m×m, 3×3) filter has (m + 2)²
    /// for every 9 of the weight's (4 times its size for F(4,3)), packed panels about one each,
    /// a route or weight layout that prepares nothing (depthwise, direct, a strided view) none.
    package static func preparationCost(_ op: GraphOp, operands: [TensorValue?], shapes: [[Int]]) -> Int {
        guard case .conv2d(let parameters) = op, operands.count > 1, let weight = operands[1],
            weight.layout.isContiguous
        else { return 0 }
        let route = ConvolutionKernels.route(
            inputShape: shapes[0], weightShape: weight.layout.shape, parameters: parameters)
        if let tile = route.winogradTile { return weight.layout.count / 9 * (tile + 2) * (tile + 2) }
        return route.usesPackedPanels ? weight.layout.count : 0
    }

    /// A constant weight in the form its kernel consumes, made on its first use (or at load,
    /// ``prepare(_:operands:shapes:)``) and kept with the model (``PreparedWeights``): the Winograd-transformed filter when the convolution runs
    /// by Winograd (``ConvolutionRoute/winograd(tile:)``), the
    /// packed panels when it runs on the packed micro-kernel; `nil` otherwise (the kernel then
    /// prepares a weight that may change for this call alone).
    static func preparedWeights(
        _ weight: TensorValue, inputShape: [Int], parameters: Conv2DParameters
    ) -> PreparedConvolutionWeight? {
        let shape = weight.layout.shape
        guard weight.layout.isContiguous else { return nil }
        let route = ConvolutionKernels.route(inputShape: inputShape, weightShape: shape, parameters: parameters)
        if let tile = route.winogradTile {
            return PreparedWeights.winograd(
                weight.storage, offset: weight.layout.offset, outputChannels: shape[0], inputChannels: shape[1],
                tile: tile
            ).map { .winograd($0) }
        }
        guard route.usesPackedPanels else { return nil }
        return PreparedWeights.packed(
            weight.storage, offset: weight.layout.offset, rows: shape[0], depth: shape[1] * shape[2] * shape[3]
        ).map { .packed($0) }
    }
}
