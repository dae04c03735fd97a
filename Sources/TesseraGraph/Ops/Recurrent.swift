import TesseraKernels

/// ``GraphOp/recurrent(_:)``: a whole `rnn` / `gru` / `lstm` layer as one kernel
/// (``RecurrentKernels``). Inputs `[x, initialH, initialC (LSTM only), packedWeights]`, all
/// float32: `x [T, B, I]`, the states `[B, D·H]`, the weights `[packedCount]` from
/// ``RecurrentParameters/packWeights(_:)``; the result `[S + states, B, D·H]`
/// (``RecurrentParameters/outputShape(steps:batch:)``).
package enum RecurrentRule: OpRule {
    package static var kind: OpKind { .kernel }

    package static func infer(_ op: GraphOp, _ inputs: [Node]) throws(OpError) -> ([Int], KernelScalarType) {
        guard case .recurrent(let p) = op else { throw OpError("[\(op)] is not a recurrent layer") }
        let name = p.cell.name
        try expectInputs(op, inputs, p.cell.stateCount + 2)
        try OpError.require(
            inputs.allSatisfy { $0.type == .float32 }, "[\(name)] needs float32 operands, got \(inputs.map(\.type))")
        try OpError.require(
            p.inputSize >= 0 && p.hiddenSize > 0, "[\(name)] input size \(p.inputSize), hidden size \(p.hiddenSize)")
        let x = inputs[0].shape
        try OpError.require(
            x.count == 3 && x[2] == p.inputSize, "[\(name)] x must be [T, B, \(p.inputSize)], got \(x)")
        let state = [x[1], p.outputWidth]
        for index in 1...p.cell.stateCount {
            try OpError.require(
                inputs[index].shape == state,
                "[\(name)] initial state \(index) must be \(state) for x \(x), got \(inputs[index].shape)")
        }
        let weights = inputs[p.cell.stateCount + 1].shape
        try OpError.require(
            weights == [p.packedCount], "[\(name)] packed weights must be [\(p.packedCount)], got \(weights)")
        let shape = p.outputShape(steps: x[0], batch: x[1])
        _ = try elementCount(op, shape)
        return (shape, .float32)
    }

    /// The kernel takes plain pointers: every operand arrives row-major.
    package static func needsRowMajor(_ op: GraphOp, operand index: Int) -> Bool { true }

    package static func run(_ op: GraphOp, _ call: KernelCall) {
        guard case .recurrent(let p) = op else { kernelFailure("[execute] \(op) is not a recurrent layer") }
        let x = call.inputs[0]
        let hasCell = p.cell.stateCount == 2
        RecurrentKernels.run(
            p, steps: x.layout.shape[0], batch: x.layout.shape[1], x: x.floats, initialH: call.inputs[1].floats,
            initialC: hasCell ? call.inputs[2].floats : nil, weights: call.inputs[hasCell ? 3 : 2].floats,
            output: call.floatOutput)
    }
}
