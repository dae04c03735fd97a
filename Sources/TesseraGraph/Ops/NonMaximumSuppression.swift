import TesseraKernels

/// ``GraphOp/nonMaximumSuppression(iouThreshold:scoreThreshold:maxOutputCount:)``: greedy NMS
/// over `float32` boxes `[n, 4]` and scores `[n]`; the result is `int32 [maxOutputCount]`,
/// best first, padded with -1.
package enum NonMaximumSuppressionRule: OpRule {
    package static var kind: OpKind { .kernel }

    package static func infer(_ op: GraphOp, _ inputs: [Node]) throws(OpError) -> ([Int], KernelScalarType) {
        guard case .nonMaximumSuppression(_, _, let maxOutputCount) = op else {
            throw OpError("[\(op)] is not a non-maximum suppression")
        }
        try expectInputs(op, inputs, 2)
        let (b, s) = (inputs[0].shape, inputs[1].shape)
        try OpError.require(
            b.count == 2 && b[1] == 4 && s == [b[0]] && inputs[0].type == .float32 && inputs[1].type == .float32,
            "[nonMaximumSuppression] needs float32 boxes [n, 4] and scores [n], got \(b) and \(s)")
        try OpError.require(maxOutputCount >= 0, "[nonMaximumSuppression] maxOutputCount \(maxOutputCount) < 0")
        return ([maxOutputCount], .int32)
    }

    /// The kernel takes plain pointers: both inputs arrive row-major.
    package static func needsRowMajor(_ op: GraphOp, operand index: Int) -> Bool { true }

    package static func run(_ op: GraphOp, _ call: KernelCall) {
        guard case .nonMaximumSuppression(let iouThreshold, let scoreThreshold, let maxOutputCount) = op else {
            kernelFailure("[execute] \(op) is not a non-maximum suppression")
        }
        let (boxes, scores) = (call.inputs[0], call.inputs[1])
        NMSKernels.nonMaximumSuppression(
            boxes: boxes.floats, scores: scores.floats, count: scores.layout.count, iouThreshold: iouThreshold,
            scoreThreshold: scoreThreshold, maxOutputCount: maxOutputCount, output: call.int32Output)
    }
}
