/// Constants: `const` and the `constexpr_*` ops that decompress weights. Both are resolved at
/// load into ``MILConstant``s; an op that reads one gets its tensor as an operand.
extension MILOp {
    static let constantOps: [MILOp] =
        [
            // A const only records its value (a mapped weight's tensor wraps the mapping, with no
            // shape rule to break): no shape-check scope around each of a model's hundreds.
            MILOp(atLoad: "const", cost: .loadTime, buildsTensors: false) { lowering in
                try defineConstant(lowering.operation, context: lowering.context)
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

    /// Decodes a `const` op's `val` into a ``MILConstant`` named by its output.
    ///
    /// Takes the operation and the context rather than the ``OperationLowering``: a message
    /// closure capturing the lowering made each of a model's hundreds of constants copy it.
    ///
    /// - Throws: ``ModelFormatError`` for a const without an output or a `val`, or a value
    ///   ``MILConstant`` cannot decode.
    private static func defineConstant(_ operation: MILOperation, context: LoweringContext) throws {
        guard let output = operation.outputs.first, let value = operation.attributes["val"] else {
            throw OperationLowering(operation: operation, context: context).invalid(
                "a const needs an output and a 'val' attribute")
        }
        let constant = try context.constant(value, what: "const '\(operation.name ?? output.name)'")
        context.defineConstant(output.name, constant, type: output.type)
    }
}
