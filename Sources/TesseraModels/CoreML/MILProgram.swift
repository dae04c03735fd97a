/// A parsed ML Program (`MILSpec.Program`): named functions of typed operations.
///
/// This is the file's structure, checked for well-formedness but not yet for meaning
/// (which ops exist, whether names resolve); the executor lowers it to a graph.
package struct MILProgram: Sendable, Equatable {
    /// The program format version; coremltools writes 1.
    package var version: Int64
    /// The functions by name; single-function models have only `"main"`.
    package var functions: [String: MILFunction]
    /// Documentation the writer attached.
    package var docString: String
    /// Program-level attributes.
    package var attributes: [String: MILValue]

    /// The function to run: `name`, or `"main"` when `name` is `nil`.
    ///
    /// - Throws: ``ModelFormatError`` naming the functions that exist when there is no such function.
    package func function(named name: String? = nil) throws -> MILFunction {
        let name = name ?? "main"
        guard let function = functions[name] else {
            let known = functions.keys.sorted().joined(separator: ", ")
            throw ModelFormatError(
                .invalidSpecification, "the ML program has no function \"\(name)\" (it has: \(known))")
        }
        return function
    }
}

/// One function of an ML program (`MILSpec.Function`).
package struct MILFunction: Sendable, Equatable {
    /// The function's inputs, in order.
    package var inputs: [MILNamedValueType]
    /// The opset the body is written for (`CoreML5` … `CoreML9`).
    package var opset: String
    /// The body for each opset; coremltools writes exactly one, keyed by ``opset``.
    package var blockSpecializations: [String: MILBlock]
    /// Function-level attributes.
    package var attributes: [String: MILValue]

    /// The body for ``opset``.
    ///
    /// - Throws: ``ModelFormatError`` when the function has no block for its own opset.
    package func block() throws -> MILBlock {
        guard let block = blockSpecializations[opset] else {
            let known = blockSpecializations.keys.sorted().joined(separator: ", ")
            throw ModelFormatError(
                .invalidSpecification, "the function has no block for its opset \"\(opset)\" (it has: \(known))")
        }
        return block
    }
}

/// A list of operations with inputs and outputs (`MILSpec.Block`): a function body, or the
/// body of a `cond` / `while_loop` branch.
package struct MILBlock: Sendable, Equatable {
    /// Inputs bound by the enclosing control-flow op (empty for a function body).
    package var inputs: [MILNamedValueType]
    /// The names of the values the block returns, in order.
    package var outputs: [String]
    /// The operations, topologically sorted.
    package var operations: [MILOperation]
    /// Block-level attributes.
    package var attributes: [String: MILValue]
}

/// One operation (`MILSpec.Operation`): a type, named arguments and typed outputs.
package struct MILOperation: Sendable, Equatable {
    /// The op's name in the MIL op set (`const`, `conv`, `linear`, …).
    package var type: String
    /// The parameters by name (`x`, `weight`, `pad_type`, …).
    package var inputs: MILNamedValues<MILArgument>
    /// The values the op defines.
    package var outputs: [MILNamedValueType]
    /// Nested blocks of control-flow ops.
    package var blocks: [MILBlock]
    /// Attributes: `name` for every op, `val` for `const`, parameters for older `constexpr_*` ops.
    package var attributes: MILNamedValues<MILValue>

    /// The op's `name` attribute, when present.
    package var name: String? { attributes["name"]?.stringScalar }
}

/// The value of one named parameter (`MILSpec.Argument`): usually one binding, several for
/// variadic parameters such as `concat.values`.
package struct MILArgument: Sendable, Equatable {
    /// The bindings, in order.
    package var bindings: [MILBinding]
}

/// One binding of a parameter (`MILSpec.Argument.Binding`).
package enum MILBinding: Sendable, Equatable {
    /// A previously defined variable.
    case name(String)
    /// A literal.
    case value(MILValue)
}
