import TesseraTensor

/// Turns one MIL operation into a ``LoweredCompute``: the lowering of each op type reads
/// its constant parameters through this type (at load) and registers the operands its
/// closure will receive.
///
/// Parameters such as `axes` or `strides` must be constants (const ops or literals); a
/// parameter computed at run time fails the load with a message naming it.
struct OperationLowering {
    /// Lowers one op type.
    typealias Handler = @Sendable (inout OperationLowering) throws -> LoweredCompute

    /// The operation being lowered.
    let operation: MILOperation
    /// Load-time state shared by all operations of the function.
    let context: LoweringContext
    /// Slots of the operands registered so far, in order.
    private(set) var operands: [Int] = []
    /// The state whose current value becomes the op's first result (`coreml_update_state`).
    var updatedState: String?
    /// The labels and outputs of a `classify` op.
    var classifier: LoweredClassifier?
    /// Whether the results' shapes are checked against the types the model declares (not
    /// for `classify`, whose declared outputs are a label and a dictionary).
    var checksDeclaredShapes = true
    /// Positions (in ``operands``) of the operands whose elements the compute closure reads
    /// while building (parameters computed at run time); see ``LoweredStep/valueReads``.
    private(set) var valueReads: [Int] = []

    init(operation: MILOperation, context: LoweringContext) {
        self.operation = operation
        self.context = context
    }

    /// The operation's name for messages.
    var displayName: String { operation.name ?? operation.outputs.first?.name ?? "?" }

    /// A load error naming the model, the operation and its type.
    func invalid(_ message: String) -> ModelFormatError {
        ModelFormatError(
            .invalidSpecification, file: context.file,
            "operation '\(displayName)' (op type '\(operation.type)'): \(message)")
    }

    /// A load error for a form of the op Tessera does not run (3-D convolution, …).
    func unsupported(_ message: String) -> ModelFormatError {
        ModelFormatError(
            .unsupportedModelType, file: context.file,
            "operation '\(displayName)' (op type '\(operation.type)'): \(message) is not supported by Tessera")
    }

    /// Runs `body` (the op's load-time lowering) with this lowering, turning a shape rule
    /// that a tensor built at load breaks (a constant of the wrong shape) into a load error
    /// naming the op.
    mutating func checkingShapes<Result>(_ body: (inout OperationLowering) throws -> Result) throws -> Result {
        do {
            return try MLTensor.withShapeChecks { try body(&self) }
        } catch let error as MLTensorShapeError {
            throw invalid(error.message)
        } catch let error as OperandError {
            throw invalid(error.message)
        }
    }

    // MARK: Operands

    /// Registers the tensor bound to parameter `name` as the next operand and returns its
    /// position in the closure's argument array.
    ///
    /// - Throws: ``ModelFormatError`` when the parameter is missing or names an unknown value.
    mutating func tensor(_ name: String) throws -> Int {
        guard let binding = operation.inputs[name]?.bindings.first else {
            throw invalid("the required input '\(name)' is missing")
        }
        return try register(binding, parameter: name)
    }

    /// ``tensor(_:)`` for an optional parameter: `nil` when it is not bound.
    mutating func optionalTensor(_ name: String) throws -> Int? {
        guard let binding = operation.inputs[name]?.bindings.first else { return nil }
        return try register(binding, parameter: name)
    }

    /// Registers every binding of a variadic parameter (`concat.values`).
    mutating func tensors(_ name: String) throws -> [Int] {
        guard let bindings = operation.inputs[name]?.bindings, !bindings.isEmpty else {
            throw invalid("the required input '\(name)' is missing")
        }
        var positions: [Int] = []
        for binding in bindings { positions.append(try register(binding, parameter: name)) }
        return positions
    }

    /// Registers a slot prepared at load (a folded constant) as the next operand.
    mutating func appendOperand(slot: Int) -> Int {
        operands.append(slot)
        return operands.count - 1
    }

    private mutating func register(_ binding: MILBinding, parameter: String) throws -> Int {
        let slot: Int
        switch binding {
        case .name(let value):
            guard let known = try context.slot(for: value) else {
                throw invalid("input '\(parameter)' refers to '\(value)', which is not defined before it")
            }
            slot = known
        case .value(let value):
            slot = try context.literalSlot(
                context.constant(value, what: "literal '\(parameter)' of '\(displayName)'"))
        }
        operands.append(slot)
        return operands.count - 1
    }

    /// The declared tensor type of the value bound to `name`, when it is known.
    func declaredType(_ name: String) -> MILTensorType? {
        guard let binding = operation.inputs[name]?.bindings.first else { return nil }
        switch binding {
        case .name(let value): return context.types[value]?.tensorType
        case .value(let value): return value.type?.tensorType
        }
    }

    // MARK: Constant parameters

    /// The constant bound to `name`, `nil` when the parameter is not bound.
    ///
    /// - Throws: ``ModelFormatError`` when the parameter is computed at run time.
    func constant(_ name: String) throws -> MILConstant? {
        guard let binding = operation.inputs[name]?.bindings.first else { return nil }
        switch binding {
        case .name(let value):
            guard let constant = context.constants[value] else {
                throw unsupported("parameter '\(name)' computed at run time ('\(value)')")
            }
            return constant
        case .value(let value):
            return try context.constant(value, what: "parameter '\(name)' of '\(displayName)'")
        }
    }

    /// Every binding of a variadic constant parameter (`reshape_like.begins`), flattened to
    /// integers; `nil` when unbound.
    func variadicInts(_ name: String) throws -> [Int]? {
        guard let bindings = operation.inputs[name]?.bindings else { return nil }
        var values: [Int] = []
        for binding in bindings {
            let constant: MILConstant
            switch binding {
            case .name(let value):
                guard let known = context.constants[value] else {
                    throw unsupported("parameter '\(name)' computed at run time ('\(value)')")
                }
                constant = known
            case .value(let value):
                constant = try context.constant(value, what: "parameter '\(name)' of '\(displayName)'")
            }
            guard let integers = constant.integers else { throw invalid("parameter '\(name)' must be integers") }
            values += integers
        }
        return values
    }

    /// A constant integer list parameter (`axes`, `strides`, `perm`, …), or `nil` when unbound;
    /// values beyond ±(2³¹ − 1) are clamped to it (``LoweredFunction/clampedParameter(_:)``).
    func ints(_ name: String) throws -> [Int]? {
        guard let values = try unclampedInts(name) else { return nil }
        return values.map(LoweredFunction.clampedParameter)
    }

    /// A constant integer list parameter as the model holds it (a seed), or `nil` when unbound.
    func unclampedInts(_ name: String) throws -> [Int]? {
        guard let constant = try constant(name) else { return nil }
        guard let values = constant.integers else { throw invalid("parameter '\(name)' must be integers") }
        return values
    }

    /// An integer-list parameter that is a constant, or else an operand whose (small) value
    /// is read when the prediction is built; `nil` when unbound.
    mutating func runtimeInts(_ name: String) throws -> RuntimeInts? {
        guard let binding = operation.inputs[name]?.bindings.first else { return nil }
        if case .name(let value) = binding, context.constants[value] == nil {
            let position = try tensor(name)
            valueReads.append(position)
            return .operand(position)
        }
        return try ints(name).map { .constant($0) }
    }

    /// A constant scalar integer parameter, or `nil` when unbound.
    func int(_ name: String) throws -> Int? {
        guard let values = try ints(name) else { return nil }
        guard values.count == 1 else { throw invalid("parameter '\(name)' must be one integer, got \(values)") }
        return values[0]
    }

    /// A constant scalar floating-point parameter, or `nil` when unbound.
    func double(_ name: String) throws -> Double? {
        guard let constant = try constant(name) else { return nil }
        guard let values = constant.doubles, values.count == 1 else {
            throw invalid("parameter '\(name)' must be one number")
        }
        return values[0]
    }

    /// A constant list of booleans, or `nil` when unbound.
    func bools(_ name: String) throws -> [Bool]? {
        guard let constant = try constant(name) else { return nil }
        guard let values = constant.booleans else { throw invalid("parameter '\(name)' must be booleans") }
        return values
    }

    /// A constant scalar boolean, or `nil` when unbound.
    func bool(_ name: String) throws -> Bool? {
        guard let values = try bools(name) else { return nil }
        guard values.count == 1 else { throw invalid("parameter '\(name)' must be one boolean") }
        return values[0]
    }

    /// A constant string, or `nil` when unbound.
    func string(_ name: String) throws -> String? {
        guard let constant = try constant(name) else { return nil }
        guard let values = constant.strings, values.count == 1 else {
            throw invalid("parameter '\(name)' must be one string")
        }
        return values[0]
    }

    /// `value` or a load error saying parameter `name` is required.
    func required<T>(_ value: T?, _ name: String) throws -> T {
        guard let value else { throw invalid("the required parameter '\(name)' is missing") }
        return value
    }
}

/// An integer-list parameter known at load, or read from an operand per prediction (slice
/// bounds or a reshape target computed from shapes, as flexible-shape models have).
enum RuntimeInts: Sendable {
    case constant([Int])
    case operand(Int)

    /// The largest operand ``values(_:)`` reads.
    static let maximumCount = 64

    /// The integers, reading an operand's elements (which materializes the small expression
    /// behind them, usually shape arithmetic, on the calling thread).
    func values(_ args: [MLTensor]) throws -> [Int] {
        switch self {
        case .constant(let values): return values
        case .operand(let position):
            let tensor = args[position]
            try require(
                tensor.rank <= 1 && tensor.scalarCount <= RuntimeInts.maximumCount,
                "a parameter computed at run time must be a short list, got shape \(tensor.shape)")
            guard tensor.kernelType.isFloatingPoint else {
                return tensor.converted(to: .int32).scalars(of: Int32.self).map(Int.init)
            }
            return try tensor.scalars(of: Float.self).map {
                try LoweredFunction.computedIndex(Double($0), "a parameter computed at run time")
            }
        }
    }
}
