import TesseraTensor

/// A scalar parameter known at load, or read from an operand when the prediction is built
/// (`range_1d`'s bounds, `fill`'s value, a random op's mean computed by the program).
enum RuntimeNumber: Sendable {
    case constant(Double)
    case operand(Int)

    /// The number, reading a one-element operand (which materializes the small expression
    /// behind it on the calling thread, as ``RuntimeInts`` does).
    ///
    /// - Throws: ``OperandError`` when the operand has more than one element.
    func value(_ args: [MLTensor]) throws -> Double {
        switch self {
        case .constant(let value): return value
        case .operand(let position):
            let tensor = args[position]
            try require(tensor.scalarCount == 1, "a scalar parameter computed at run time has shape \(tensor.shape)")
            if tensor.kernelType.isFloatingPoint { return Double(tensor.asFloat.scalars(of: Float.self)[0]) }
            return Double(tensor.converted(to: .int32).scalars(of: Int32.self)[0])
        }
    }
}

extension OperationLowering {
    /// A scalar number parameter that is a constant, or else an operand read when the
    /// prediction is built; `nil` when unbound.
    ///
    /// - Throws: ``ModelFormatError`` when a constant holds other than one number.
    mutating func runtimeNumber(_ name: String) throws -> RuntimeNumber? {
        guard let binding = operation.inputs[name]?.bindings.first else { return nil }
        if case .name(let value) = binding, context.constants[value] == nil {
            return .operand(try tensor(name))
        }
        return try double(name).map { .constant($0) }
    }
}
