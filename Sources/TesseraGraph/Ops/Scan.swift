import TesseraKernels

/// ``GraphOp/scan(product:axis:exclusive:reverse:)``: a cumulative sum or product along an
/// axis of a non-`Bool` tensor; same shape and type.
package enum ScanRule: OpRule {
    package static var kind: OpKind { .kernel }

    package static func infer(_ op: GraphOp, _ inputs: [Node]) throws(OpError) -> ([Int], KernelScalarType) {
        guard case .scan(_, let axis, _, _) = op else { throw OpError("[\(op)] is not a scan") }
        try expectInputs(op, inputs, 1)
        try checkAxis(op, axis, inputs[0].shape.count)
        try OpError.require(inputs[0].type != .bool, "[\(op)] is not defined for bool tensors")
        return (inputs[0].shape, inputs[0].type)
    }

    package static func run(_ op: GraphOp, _ call: KernelCall) {
        guard case .scan(let product, let axis, let exclusive, let reverse) = op else {
            kernelFailure("[execute] \(op) is not a scan")
        }
        let x = call.x
        if product {
            ScanKernels.cumulativeProduct(
                input: x.pointer, layout: x.layout, type: x.type, axis: axis, exclusive: exclusive, reverse: reverse,
                output: call.output)
        } else {
            ScanKernels.cumulativeSum(
                input: x.pointer, layout: x.layout, type: x.type, axis: axis, exclusive: exclusive, reverse: reverse,
                output: call.output)
        }
    }
}
