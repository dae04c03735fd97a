import TesseraKernels

/// ``GraphOp/resize(height:width:method:)``: the last two axes of a `float32` or `float64`
/// tensor resized to `height × width` (nearest or bilinear); both sizes are positive.
package enum ResizeRule: OpRule {
    package static var kind: OpKind { .kernel }

    package static func infer(_ op: GraphOp, _ inputs: [Node]) throws(OpError) -> ([Int], KernelScalarType) {
        guard case .resize(let height, let width, _) = op else { throw OpError("[\(op)] is not a resize") }
        try expectInputs(op, inputs, 1)
        let shape = inputs[0].shape
        try OpError.require(
            shape.count >= 2 && height > 0 && width > 0,
            "[resize] needs rank ≥ 2 and a positive size, got \(shape) to \(height)×\(width)")
        try OpError.require(
            shape[shape.count - 2] > 0 && shape[shape.count - 1] > 0,
            "[resize] cannot resize an empty image \(shape) to \(height)×\(width)")
        try OpError.require(
            inputs[0].type == .float32 || inputs[0].type == .float64,
            "[resize] needs a float32 or float64 tensor, got \(inputs[0].type) \(shape)")
        return (shape.dropLast(2) + [height, width], inputs[0].type)
    }

    /// The kernel takes a plain pointer: the input arrives row-major.
    package static func needsRowMajor(_ op: GraphOp, operand index: Int) -> Bool { true }

    package static func run(_ op: GraphOp, _ call: KernelCall) {
        guard case .resize(let height, let width, let method) = op else {
            kernelFailure("[execute] \(op) is not a resize")
        }
        let source = call.x
        let shape = source.layout.shape
        ResizeKernels.resize(
            input: source.pointer, type: source.type, planes: shape.dropLast(2).reduce(1, *),
            height: shape[shape.count - 2], width: shape[shape.count - 1], newHeight: height, newWidth: width,
            method: method, output: call.output)
    }
}
