/// Constants: `const` and the `constexpr_*` ops that decompress weights. Both are resolved at
/// load into ``MILConstant``s; an op that reads one gets its tensor as an operand.
extension MILOp {
    static let constantOps: [MILOp] =
        [
            MILOp(atLoad: "const", cost: .loadTime) { lowering in
                let operation = lowering.operation
                guard let output = operation.outputs.first, let value = operation.attributes["val"] else {
                    throw lowering.invalid("a const needs an output and a 'val' attribute")
                }
                lowering.context.defineConstant(
                    output.name,
                    try MILConstant(value, in: lowering.context.package, what: "const '\(lowering.displayName)'"),
                    type: output.type)
            }
        ]
        + ConstexprDecompression.opTypes.sorted().map { type in
            MILOp(atLoad: type, cost: .loadTime) { lowering in
                // Compressed weights are decoded once, at load, into plain Float32 constants
                // (the two-output sparse ops define a mask of zeros and ones and the values).
                let outputs = lowering.operation.outputs
                guard !outputs.isEmpty else { throw lowering.invalid("a \(type) op needs an output") }
                let dense = try ConstexprDecompression.decodeOutputs(
                    lowering.operation, in: lowering.context.package, known: lowering.context.decompressed)
                for (output, value) in zip(outputs, dense) {
                    lowering.context.defineDecompressed(output.name, value, type: output.type)
                }
            }
        }
}
