import TesseraKernels

/// ``GraphOp/reduce(_:axes:)``: a reduction over sorted, non-negative axes that keeps rank
/// (each reduced axis becomes 1). Integer means are `float32`; `max`, `min`, `argmax` and
/// `argmin` need a non-empty axis.
package enum ReduceRule: OpRule {
    package static var kind: OpKind { .kernel }

    package static func infer(_ op: GraphOp, _ inputs: [Node]) throws(OpError) -> ([Int], KernelScalarType) {
        guard case .reduce(let reduction, let axes) = op else { throw OpError("[\(op)] is not a reduction") }
        try expectInputs(op, inputs, 1)
        var shape = inputs[0].shape
        for axis in axes {
            try checkAxis(op, axis, shape.count)
            if shape[axis] == 0 {
                try OpError.require(
                    reduction != .max && reduction != .min && reduction != .argmax && reduction != .argmin,
                    "[\(reduction)] cannot reduce an empty axis \(axis) of shape \(inputs[0].shape)")
            }
            shape[axis] = 1
        }
        // Documented: integer means are float32.
        if reduction == .mean && inputs[0].type.isInteger { return (shape, .float32) }
        guard let type = reduction.outputType(for: inputs[0].type) else {
            throw OpError("[\(reduction)] is not defined for \(inputs[0].type) tensors (shape \(inputs[0].shape))")
        }
        return (shape, type)
    }

    package static func run(_ op: GraphOp, _ call: KernelCall) {
        guard case .reduce(let reduction, let axes) = op else { kernelFailure("[execute] \(op) is not a reduction") }
        let x = call.x
        ReductionKernels.reduce(
            reduction, input: x.pointer, layout: x.layout, type: x.type, axes: axes, output: call.output,
            outputType: call.type)
    }
}
