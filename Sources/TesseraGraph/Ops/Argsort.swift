import TesseraKernels

/// ``GraphOp/argsort(axis:descending:count:)``: the `int32` indices of the first `count`
/// elements of each line along `axis` in sorted order (stable; NaN above every number).
/// `count` is in `0...shape[axis]`; equal to it, the op is a full argsort, below it a top-k.
package enum ArgsortRule: OpRule {
    package static var kind: OpKind { .kernel }

    package static func infer(_ op: GraphOp, _ inputs: [Node]) throws(OpError) -> ([Int], KernelScalarType) {
        guard case .argsort(let axis, _, let count) = op else { throw OpError("[\(op)] is not an argsort") }
        try expectInputs(op, inputs, 1)
        try checkAxis(op, axis, inputs[0].shape.count)
        var shape = inputs[0].shape
        try OpError.require(
            count >= 0 && count <= shape[axis],
            "[argsort] count \(count) is outside 0...\(shape[axis]) for axis \(axis) of shape \(shape)")
        shape[axis] = count
        return (shape, .int32)
    }

    package static func run(_ op: GraphOp, _ call: KernelCall) {
        guard case .argsort(let axis, let descending, let count) = op else {
            kernelFailure("[execute] \(op) is not an argsort")
        }
        let x = call.x
        SortKernels.argsort(
            input: x.pointer, layout: x.layout, type: x.type, axis: axis, descending: descending, count: count,
            output: call.int32Output)
    }
}
