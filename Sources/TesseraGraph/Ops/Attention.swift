import TesseraKernels

/// ``GraphOp/attention(scale:)``: `softmax(scale · q · kᵀ + mask) · v` in one kernel
/// (``AttentionKernels``). Inputs `q [..., L, E]`, `k [..., S, E]`, `v [..., S, Ev]` whose batch
/// dimensions broadcast together, and optionally an additive mask broadcastable to the scores
/// `[..., L, S]`; all float32. The result is `[..., L, Ev]`.
package enum AttentionRule: OpRule {
    package static var kind: OpKind { .kernel }

    package static func infer(_ op: GraphOp, _ inputs: [Node]) throws(OpError) -> ([Int], KernelScalarType) {
        try OpError.require(
            inputs.count == 3 || inputs.count == 4, "[\(op)] takes query, key, value and a mask, got \(inputs.count)")
        try OpError.require(
            inputs.allSatisfy { $0.type == .float32 }, "[\(op)] needs float32 operands, got \(inputs.map(\.type))")
        let (q, k, v) = (inputs[0].shape, inputs[1].shape, inputs[2].shape)
        try OpError.require(
            q.count >= 2 && k.count >= 2 && v.count >= 2, "[\(op)] query \(q), key \(k), value \(v) need rank ≥ 2")
        try OpError.require(
            q.last == k.last && k[k.count - 2] == v[v.count - 2],
            "[\(op)] query \(q), key \(k), value \(v) do not fit (q · kᵀ · v)")
        guard let kv = StridedLayout.broadcastShape(Array(k.dropLast(2)), Array(v.dropLast(2))),
            let batch = StridedLayout.broadcastShape(Array(q.dropLast(2)), kv)
        else { throw OpError("[\(op)] batch dimensions of query \(q), key \(k), value \(v) do not broadcast") }
        let scores = batch + [q[q.count - 2], k[k.count - 2]]
        if inputs.count == 4 {
            let mask = inputs[3].shape
            try OpError.require(
                mask.count <= scores.count && StridedLayout.broadcastShape(mask, scores) == scores,
                "[\(op)] mask \(mask) does not broadcast to the scores \(scores)")
        }
        let shape = batch + [q[q.count - 2], v[v.count - 1]]
        _ = try elementCount(op, shape)
        return (shape, .float32)
    }

    /// The mask arrives row-major (it is broadcast by strides here); the others are read in
    /// place when their last axis is unit-strided.
    package static func needsRowMajor(_ op: GraphOp, operand index: Int) -> Bool { index == 3 }

    package static func run(_ op: GraphOp, _ call: KernelCall) {
        guard case .attention(let scale) = op else { kernelFailure("[execute] \(op) is not attention") }
        let batch = Array(call.shape.dropLast(2))
        let l = call.shape[call.shape.count - 2]
        /// An operand broadcast to the output's batch, its last axis unit-strided (copied when not).
        func operand(_ index: Int) -> TensorValue {
            var value = call.inputs[index]
            let shape = value.layout.shape
            if shape[shape.count - 1] > 1 && value.layout.strides[shape.count - 1] != 1 { value = value.compacted() }
            return value.with(layout: value.layout.broadcast(to: batch + shape.suffix(2)))
        }
        let (q, k, v) = (operand(0), operand(1), operand(2))
        let s = k.layout.shape[k.layout.rank - 2]
        var maskLayout: StridedLayout?
        var mask: UnsafeRawPointer?
        if call.inputs.count == 4 {
            maskLayout = call.inputs[3].layout.broadcast(to: batch + [l, s])
            mask = call.inputs[3].pointer
        }
        AttentionKernels.attention(
            query: q.pointer, queryLayout: q.layout, key: k.pointer, keyLayout: k.layout, value: v.pointer,
            valueLayout: v.layout, mask: mask, maskLayout: maskLayout, scale: scale, output: call.floatOutput)
    }
}
