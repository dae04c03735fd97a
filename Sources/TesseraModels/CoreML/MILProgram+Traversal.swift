extension MILProgram {
    /// Calls `body` with every blob-file value in the program and its declared type: const
    /// `val`s, `constexpr_*` attributes, literal arguments, in every function and nested block.
    ///
    /// Iterative, so deeply nested control flow cannot overflow the stack.
    package func forEachBlobReference(
        _ body: (MILBlobReference, MILValueType?) throws -> Void
    ) throws {
        var blocks: [MILBlock] = []
        for name in functions.keys.sorted() {
            blocks.append(contentsOf: functions[name]!.blockSpecializations.values)
        }
        var values: [MILValue] = []
        while let block = blocks.popLast() {
            for operation in block.operations {
                values.append(contentsOf: operation.attributes.values)
                for argument in operation.inputs.values {
                    for case .value(let value) in argument.bindings { values.append(value) }
                }
                blocks.append(contentsOf: operation.blocks)
            }
            while let value = values.popLast() {
                switch value.storage {
                case .blobFile(let reference): try body(reference, value.type)
                case .immediate(.list(let elements)), .immediate(.tuple(let elements)):
                    values.append(contentsOf: elements)
                case .immediate(.dictionary(let entries)):
                    for entry in entries { values += [entry.key, entry.value] }
                case .immediate(.tensor), .none: break
                }
            }
        }
    }
}
