import TesseraKernels

/// ``GraphOp/maxPool2d(_:)`` and ``GraphOp/averagePool2d(_:countIncludePad:)``: 2-D pooling
/// of a `float32` NCHW input; the window rule is ``Pool2DParameters``'s. Average pooling has no
/// dilation.
package enum Pool2DRule: OpRule {
    package static var kind: OpKind { .kernel }

    package static func infer(_ op: GraphOp, _ inputs: [Node]) throws(OpError) -> ([Int], KernelScalarType) {
        let parameters: Pool2DParameters
        switch op {
        case .maxPool2d(let p): parameters = p
        case .averagePool2d(let p, _):
            parameters = p
            try OpError.require(
                p.dilationHeight == 1 && p.dilationWidth == 1, "[averagePool2d] dilation is not supported: \(p)")
        default: throw OpError("[\(op)] is not a pooling")
        }
        try expectInputs(op, inputs, 1)
        try OpError.require(inputs[0].type == .float32, "[\(op)] needs a float32 tensor, got \(inputs[0].type)")
        return (try parameters.checkedOutputShape(inputShape: inputs[0].shape), .float32)
    }

    /// The kernels take plain pointers: the input arrives row-major.
    package static func needsRowMajor(_ op: GraphOp, operand index: Int) -> Bool { true }

    package static func run(_ op: GraphOp, _ call: KernelCall) {
        let input = call.x
        switch op {
        case .maxPool2d(let parameters):
            PoolingKernels.maxPool2d(
                input: input.floats, inputShape: input.layout.shape, output: call.floatOutput, parameters: parameters)
        case .averagePool2d(let parameters, let countIncludePad):
            PoolingKernels.averagePool2d(
                input: input.floats, inputShape: input.layout.shape, output: call.floatOutput, parameters: parameters,
                countIncludePad: countIncludePad)
        default:
            kernelFailure("[execute] \(op) is not a pooling")
        }
    }
}
