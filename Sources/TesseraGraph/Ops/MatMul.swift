import TesseraKernels

/// ``GraphOp/matmul``: the batched product of two rank ≥ 2 tensors of one non-`Bool` type;
/// batch dimensions broadcast. `[..., m, k] × [..., k, n]` is `[..., m, n]`.
package enum MatMulRule: OpRule {
    package static var kind: OpKind { .kernel }

    package static func infer(_ op: GraphOp, _ inputs: [Node]) throws(OpError) -> ([Int], KernelScalarType) {
        try expectInputs(op, inputs, 2)
        let (a, b) = (inputs[0].shape, inputs[1].shape)
        try OpError.require(a.count >= 2 && b.count >= 2, "[matmul] operands must have rank ≥ 2: \(a) vs \(b)")
        try OpError.require(
            inputs[0].type == inputs[1].type, "[matmul] scalar types differ: \(inputs[0].type) vs \(inputs[1].type)")
        try OpError.require(inputs[0].type != .bool, "[matmul] is not defined for bool tensors")
        try OpError.require(a[a.count - 1] == b[b.count - 2], "[matmul] inner dimensions differ: \(a) vs \(b)")
        guard let batch = StridedLayout.broadcastShape(Array(a.dropLast(2)), Array(b.dropLast(2))) else {
            throw OpError("[matmul] batch dimensions of \(a) and \(b) are not broadcastable")
        }
        return (batch + [a[a.count - 2], b[b.count - 1]], inputs[0].type)
    }

    package static func run(_ op: GraphOp, _ call: KernelCall) {
        let (a, b) = (call.inputs[0], call.inputs[1])
        GEMMKernels.matmul(
            a: a.pointer, aLayout: a.layout, b: b.pointer, bLayout: b.layout, type: a.type, output: call.output)
    }
}
