extension MLModelStructure {
    /// An ML program's functions.
    ///
    /// ```swift
    /// guard case let .program(program) = plan.modelStructure else { return }
    /// let operations = program.functions["main"]?.block.operations ?? []
    /// ```
    public struct Program: Sendable {
        /// The functions by name; single-function models have only `"main"`.
        public let functions: [String: Function]

        /// One function: its inputs and body.
        public struct Function: Sendable {
            /// The function's inputs, in order.
            public let inputs: [NamedValueType]
            /// The function's body.
            public let block: Block
        }

        /// A list of operations: a function body or a control-flow branch.
        public struct Block: Sendable {
            /// Values bound by the enclosing operation (empty for a function body).
            public let inputs: [NamedValueType]
            /// The operations in execution order.
            public let operations: [Operation]
            /// The names of the values the block returns.
            public let outputNames: [String]
        }

        /// One operation of a program.
        public struct Operation: Sendable {
            /// The MIL operator (`const`, `conv`, `linear`, `relu`, …).
            public let operatorName: String
            /// The operation's parameters by name.
            public let inputs: [String: Argument]
            /// The values the operation defines.
            public let outputs: [NamedValueType]
            /// Nested blocks of control-flow operations (`cond`, `while_loop`).
            public let blocks: [Block]
            /// Identifies the operation within its plan.
            let key: StructureKey
        }

        /// The value of one parameter: one binding, or several for variadic parameters.
        public struct Argument: Sendable {
            /// The bindings, in order.
            public let bindings: [Binding]
        }

        /// One binding of a parameter: a named value or a literal.
        public enum Binding: Sendable {
            /// A value defined earlier in the program.
            case name(String)
            /// A literal.
            case value(Value)
        }

        /// A named, typed value: a function input or an operation's output.
        public struct NamedValueType: Sendable {
            /// The value's name.
            public let name: String
            /// The value's type.
            public let type: ValueType
        }

        /// A literal value. Opaque, as in Core ML; Tessera adds a textual description.
        public struct Value: Sendable, CustomStringConvertible {
            /// The parsed literal.
            package let milValue: MILValue

            /// **Tessera extension**: the literal's type, and where a weight blob lives.
            public var description: String {
                let type = milValue.type.map { "\($0)" } ?? "untyped"
                if let reference = milValue.blobReference { return "\(type) @ blob offset \(reference.offset)" }
                return type
            }
        }

        /// A value's type. Opaque, as in Core ML; Tessera adds a textual description.
        public struct ValueType: Sendable, CustomStringConvertible {
            /// The parsed type.
            package let milType: MILValueType

            /// **Tessera extension**: the type as MIL writes it, e.g. `fp32[1, 3, 8, 8]`.
            public var description: String { "\(milType)" }
        }
    }
}
