import TesseraKernels

/// ``GraphOp/gather(axis:)``, ``GraphOp/gatherElements(axis:)`` and ``GraphOp/gatherND``:
/// elements of the first input picked by `int32` indices (the second input). Whether each
/// index is in range depends on the elements, so the kernels check that when they run.
///
/// - `gather`: `take(x, indices, axis)`; shape `x[..<axis] + indices + x[(axis + 1)...]`.
/// - `gatherElements`: `take_along_axis`; indices of `x`'s rank, no larger off `axis`.
/// - `gatherND`: `gather_nd`; indices `[..., m]` with `m ≤ rank`, shape `indices[..<-1] + x[m...]`.
package enum GatherRule: OpRule {
    package static var kind: OpKind { .kernel }

    package static func infer(_ op: GraphOp, _ inputs: [Node]) throws(OpError) -> ([Int], KernelScalarType) {
        try expectInputs(op, inputs, 2)
        let (x, i) = (inputs[0].shape, inputs[1].shape)
        switch op {
        case .gather(let axis):
            try checkAxis(op, axis, x.count)
            try OpError.require(inputs[1].type == .int32, "[gather] indices must be int32, got \(inputs[1].type)")
            return (Array(x[..<axis]) + i + Array(x[(axis + 1)...]), inputs[0].type)
        case .gatherElements(let axis):
            try checkAxis(op, axis, x.count)
            try OpError.require(
                inputs[1].type == .int32, "[gatherElements] indices must be int32, got \(inputs[1].type)")
            try OpError.require(
                i.count == x.count
                    && zip(x, i).enumerated().allSatisfy { $0.offset == axis || $0.element.1 <= $0.element.0 },
                "[gatherElements] indices \(i) do not fit operand \(x) along axis \(axis)")
            return (i, inputs[0].type)
        case .gatherND:
            try OpError.require(
                inputs[1].type == .int32, "[gatherND] indices must be int32, got \(inputs[1].type) \(i)")
            try OpError.require(
                !i.isEmpty && i[i.count - 1] <= x.count,
                "[gatherND] indices \(i) need rank ≥ 1 and index vectors no longer than the rank of \(x)")
            return (Array(i.dropLast()) + Array(x[i[i.count - 1]...]), inputs[0].type)
        default:
            throw OpError("[\(op)] is not a gather")
        }
    }

    /// The indices arrive row-major; `gatherND` also wants its operand row-major.
    package static func needsRowMajor(_ op: GraphOp, operand index: Int) -> Bool {
        if case .gatherND = op { return true }
        return index == 1
    }

    package static func run(_ op: GraphOp, _ call: KernelCall) {
        let (x, indices) = (call.inputs[0], call.inputs[1])
        switch op {
        case .gather(let axis):
            CopyKernels.gather(
                from: x.pointer, layout: x.layout, axis: axis, indices: indices.int32s,
                indicesShape: indices.layout.shape, elementSize: x.type.byteCount, to: call.output)
        case .gatherElements(let axis):
            CopyKernels.gatherElements(
                from: x.pointer, layout: x.layout, axis: axis, indices: indices.int32s,
                indicesShape: indices.layout.shape, elementSize: x.type.byteCount, to: call.output)
        case .gatherND:
            CopyKernels.gatherND(
                from: x.pointer, shape: x.layout.shape, indices: indices.int32s, indicesShape: indices.layout.shape,
                elementSize: x.type.byteCount, to: call.output)
        default:
            kernelFailure("[execute] \(op) is not a gather")
        }
    }
}
