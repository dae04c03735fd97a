import TesseraKernels

/// ``GraphOp/multinomial(samples:lenient:)``: `samples` `int32` category indices per row,
/// drawn from the last axis's floating-point weights; the second input is the seed,
/// `uint32 [2]` (low word first), so plans do not depend on it. Whether the weights are usable
/// (finite, non-negative, a positive row sum) depends on the elements, so the kernel checks
/// it: the strict op traps on unusable weights, the lenient one counts them as 0 and draws
/// category 0 for a row left without weight (``RandomKernels/multinomial(weights:type:rows:categories:samples:seed:lenient:output:)``).
package enum MultinomialRule: OpRule {
    package static var kind: OpKind { .kernel }

    package static func infer(_ op: GraphOp, _ inputs: [Node]) throws(OpError) -> ([Int], KernelScalarType) {
        guard case .multinomial(let samples, _) = op else { throw OpError("[\(op)] is not a multinomial") }
        try expectInputs(op, inputs, 2)
        try OpError.require(
            inputs[1].type == .uint32 && inputs[1].shape == [2],
            "[multinomial] the seed input must be uint32 [2], got \(inputs[1].type) \(inputs[1].shape)")
        let shape = inputs[0].shape
        try OpError.require(
            !shape.isEmpty && shape[shape.count - 1] > 0 && inputs[0].type.isFloatingPoint && samples >= 0,
            "[multinomial] needs floating-point weights with a non-empty last axis, got \(inputs[0].type) \(shape)")
        return (shape.dropLast() + [samples], .int32)
    }

    /// The kernel takes plain pointers: both inputs arrive row-major.
    package static func needsRowMajor(_ op: GraphOp, operand index: Int) -> Bool { true }

    package static func run(_ op: GraphOp, _ call: KernelCall) {
        guard case .multinomial(let samples, let lenient) = op else {
            kernelFailure("[execute] \(op) is not a multinomial")
        }
        let weights = call.x
        let words = call.inputs[1].pointer.assumingMemoryBound(to: UInt32.self)
        let seed = UInt64(words[0]) | (UInt64(words[1]) << 32)
        let categories = weights.layout.shape[weights.layout.shape.count - 1]
        RandomKernels.multinomial(
            weights: weights.pointer, type: weights.type, rows: weights.layout.count / categories,
            categories: categories, samples: samples, seed: seed, lenient: lenient, output: call.int32Output)
    }
}
