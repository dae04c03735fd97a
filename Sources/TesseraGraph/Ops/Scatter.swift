import TesseraKernels

/// ``GraphOp/scatter(axis:)``: the first input with the third input's elements written at
/// `int32` indices (the second input) along an axis. Indices and updates share one shape of
/// the input's rank, no larger off `axis`; the later of two writes to one element wins.
package enum ScatterRule: OpRule {
    package static var kind: OpKind { .kernel }

    package static func infer(_ op: GraphOp, _ inputs: [Node]) throws(OpError) -> ([Int], KernelScalarType) {
        guard case .scatter(let axis) = op else { throw OpError("[\(op)] is not a scatter") }
        try expectInputs(op, inputs, 3)
        let (x, i, u) = (inputs[0].shape, inputs[1].shape, inputs[2].shape)
        try checkAxis(op, axis, x.count)
        try OpError.require(inputs[1].type == .int32, "[scatter] indices must be int32, got \(inputs[1].type) \(i)")
        try OpError.require(
            inputs[2].type == inputs[0].type,
            "[scatter] replacement type \(inputs[2].type) differs from the tensor's \(inputs[0].type)")
        try OpError.require(
            u == i && i.count == x.count
                && zip(x, i).enumerated().allSatisfy { $0.offset == axis || $0.element.1 <= $0.element.0 },
            "[scatter] indices \(i) and replacement \(u) must have one shape that fits \(x) off axis \(axis)")
        return (x, inputs[0].type)
    }

    /// The indices arrive row-major.
    package static func needsRowMajor(_ op: GraphOp, operand index: Int) -> Bool { index == 1 }

    package static func run(_ op: GraphOp, _ call: KernelCall) {
        guard case .scatter(let axis) = op else { kernelFailure("[execute] \(op) is not a scatter") }
        let (x, indices, updates) = (call.inputs[0], call.inputs[1], call.inputs[2])
        CopyKernels.copy(from: x.pointer, layout: x.layout, elementSize: x.type.byteCount, to: call.output)
        CopyKernels.scatterElements(
            into: call.output, shape: call.shape, axis: axis, indices: indices.int32s,
            indicesShape: indices.layout.shape, updates: updates.pointer, updatesLayout: updates.layout,
            elementSize: x.type.byteCount)
    }
}
