import TesseraKernels

/// ``GraphOp/softmax(axis:)`` and ``GraphOp/logSoftmax(axis:)``: along a non-negative axis of
/// a floating-point tensor; same shape and type.
package enum SoftmaxRule: OpRule {
    package static var kind: OpKind { .kernel }

    package static func infer(_ op: GraphOp, _ inputs: [Node]) throws(OpError) -> ([Int], KernelScalarType) {
        guard let (axis, _) = parameters(op) else { throw OpError("[\(op)] is not a softmax") }
        try expectInputs(op, inputs, 1)
        try checkAxis(op, axis, inputs[0].shape.count)
        try OpError.require(
            inputs[0].type.isFloatingPoint, "[\(op)] needs a floating-point tensor, got \(inputs[0].type)")
        return (inputs[0].shape, inputs[0].type)
    }

    package static func run(_ op: GraphOp, _ call: KernelCall) {
        guard let (axis, log) = parameters(op) else { kernelFailure("[execute] \(op) is not a softmax") }
        let x = call.x
        if log {
            SoftmaxKernels.logSoftmax(input: x.pointer, layout: x.layout, type: x.type, axis: axis, output: call.output)
        } else {
            SoftmaxKernels.softmax(input: x.pointer, layout: x.layout, type: x.type, axis: axis, output: call.output)
        }
    }

    /// The axis of a softmax or log-softmax op and whether it is the log form; `nil` for
    /// another op.
    package static func parameters(_ op: GraphOp) -> (axis: Int, log: Bool)? {
        switch op {
        case .softmax(let axis): (axis, false)
        case .logSoftmax(let axis): (axis, true)
        default: nil
        }
    }
}
