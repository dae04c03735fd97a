import TesseraKernels

/// ``GraphOp/concat(axis:)``: one or more tensors of one rank and scalar type joined along
/// an axis; every other dimension must agree.
package enum ConcatRule: OpRule {
    package static var kind: OpKind { .kernel }

    package static func infer(_ op: GraphOp, _ inputs: [Node]) throws(OpError) -> ([Int], KernelScalarType) {
        guard case .concat(let axis) = op else { throw OpError("[\(op)] is not a concatenation") }
        try OpError.require(!inputs.isEmpty, "[concatenate] needs at least one tensor")
        let first = inputs[0]
        var shape = first.shape
        try checkAxis(op, axis, shape.count)
        for input in inputs.dropFirst() {
            try OpError.require(
                input.type == first.type, "[concatenate] scalar types differ: \(input.type) vs \(first.type)")
            var a = input.shape
            var b = first.shape
            try OpError.require(a.count == b.count, "[concatenate] ranks differ: \(input.shape) vs \(first.shape)")
            a[axis] = 0
            b[axis] = 0
            try OpError.require(
                a == b, "[concatenate] shapes differ off axis \(axis): \(input.shape) vs \(first.shape)")
            shape[axis] += input.shape[axis]
        }
        return (shape, first.type)
    }

    package static func run(_ op: GraphOp, _ call: KernelCall) {
        guard case .concat(let axis) = op else { kernelFailure("[execute] \(op) is not a concatenation") }
        CopyKernels.concatenate(
            inputs: call.inputs.map { ($0.pointer, $0.layout) }, axis: axis, elementSize: call.type.byteCount,
            to: call.output)
    }
}
