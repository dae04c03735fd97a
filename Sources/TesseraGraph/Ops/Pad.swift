import TesseraKernels

/// ``GraphOp/pad(before:after:mode:)``: `(before, after)` elements added on each axis, chosen
/// by the mode (a constant converted to the tensor's type, a mirror, or the edge). Amounts
/// are non-negative; a mirror pads less than (reflect) or at most (symmetric) the axis's size.
package enum PadRule: OpRule {
    package static var kind: OpKind { .kernel }

    package static func infer(_ op: GraphOp, _ inputs: [Node]) throws(OpError) -> ([Int], KernelScalarType) {
        guard case .pad(let before, let after, let mode) = op else { throw OpError("[\(op)] is not a padding") }
        try expectInputs(op, inputs, 1)
        let shape = inputs[0].shape
        try OpError.require(
            before.count == shape.count && after.count == shape.count,
            "[pad] needs one (before, after) pair per axis of \(shape)")
        try CopyKernels.checkPadding(
            shape: shape, padding: zip(before, after).map { (before: $0, after: $1) },
            mode: kernelMode(mode, type: inputs[0].type))
        return (zip(shape, zip(before, after)).map { $0 + $1.0 + $1.1 }, inputs[0].type)
    }

    package static func run(_ op: GraphOp, _ call: KernelCall) {
        guard case .pad(let before, let after, let mode) = op else { kernelFailure("[execute] \(op) is not a padding") }
        let x = call.x
        CopyKernels.pad(
            from: x.pointer, layout: x.layout, elementSize: x.type.byteCount,
            padding: zip(before, after).map { (before: $0, after: $1) }, mode: kernelMode(mode, type: x.type),
            to: call.output)
    }

    /// The kernel's form of `mode` for elements of `type` (a constant as its bits in `type`).
    static func kernelMode(_ mode: GraphPadMode, type: KernelScalarType) -> PadMode {
        switch mode {
        case .constant(let value): .constant(bitPattern: bitPattern(of: value, as: type))
        case .reflect: .reflect
        case .symmetric: .symmetric
        case .edge: .edge
        }
    }

    /// The bits of `value` converted to `type`, in the low bytes.
    package static func bitPattern(of value: Double, as type: KernelScalarType) -> UInt64 {
        var source = value
        var bits: UInt64 = 0
        ScalarConversion.convert(&source, from: .float64, into: &bits, to: type, count: 1)
        return bits
    }
}
