import TesseraKernels

/// ``GraphOp/tile(_:)``: the whole tensor repeated `multiples[i]` times along axis `i` (one
/// non-negative multiple per axis).
package enum TileRule: OpRule {
    package static var kind: OpKind { .kernel }

    package static func infer(_ op: GraphOp, _ inputs: [Node]) throws(OpError) -> ([Int], KernelScalarType) {
        guard case .tile(let multiples) = op else { throw OpError("[\(op)] is not a tile") }
        try expectInputs(op, inputs, 1)
        try OpError.require(
            multiples.count == inputs[0].shape.count && multiples.allSatisfy { $0 >= 0 },
            "[tile] multiples \(multiples) must be non-negative, one per axis of \(inputs[0].shape)")
        let shape = zip(inputs[0].shape, multiples).map { $0.multipliedReportingOverflow(by: $1) }
        try OpError.require(
            !shape.contains { $0.overflow }, "[tile] multiples \(multiples) overflow the size of \(inputs[0].shape)")
        let tiled = shape.map(\.partialValue)
        _ = try elementCount(op, tiled)
        return (tiled, inputs[0].type)
    }

    package static func run(_ op: GraphOp, _ call: KernelCall) {
        guard case .tile(let multiples) = op else { kernelFailure("[execute] \(op) is not a tile") }
        let x = call.x
        CopyKernels.tile(
            from: x.pointer, layout: x.layout, multiples: multiples, elementSize: x.type.byteCount, to: call.output)
    }
}
