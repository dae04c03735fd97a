/// The `constexpr_*` ops whose result is a constant known at load: Tessera evaluates them
/// once, like a const op, so the weights they decompress are plain Float32 tensors.
extension LoweringContext {
    /// The op types evaluated at load.
    static let constexprTypes: Set<String> = ["constexpr_affine_dequantize", "constexpr_cast"]

    /// Evaluates a `constexpr_*` op. Its parameters are attributes up to iOS 17 and inputs
    /// (bound to consts) from iOS 18; both are read.
    ///
    /// - Throws: ``ModelFormatError`` when a parameter is missing or malformed.
    func evaluateConstexpr(_ operation: MILOperation) throws -> MILConstant {
        let name = operation.name ?? operation.outputs.first?.name ?? "?"
        func invalid(_ message: String) -> ModelFormatError {
            ModelFormatError(
                .invalidSpecification, file: file, "operation '\(name)' (op type '\(operation.type)'): \(message)")
        }
        func parameter(_ key: String) throws -> MILConstant {
            if let value = operation.attributes[key] {
                return try MILConstant(value, in: package, what: "parameter '\(key)' of '\(name)'")
            }
            if let binding = operation.inputs[key]?.bindings.first {
                switch binding {
                case .name(let value): if let constant = constants[value] { return constant }
                case .value(let value):
                    return try MILConstant(value, in: package, what: "parameter '\(key)' of '\(name)'")
                }
            }
            throw invalid("the required parameter '\(key)' is missing or not a constant")
        }
        switch operation.type {
        case "constexpr_cast":
            let source = try parameter("source_val")
            guard let values = source.doubles else { throw invalid("source_val must be numeric") }
            return MILConstant(shape: source.shape, dataType: .float32, elements: .floats(values.map { Float($0) }))
        default:  // constexpr_affine_dequantize
            let data = try parameter("quantized_data")
            let zeroPoint = try parameter("zero_point")
            let scale = try parameter("scale")
            guard let q = data.doubles, let z = zeroPoint.doubles, let s = scale.doubles,
                let axisValue = try parameter("axis").integers?.first
            else { throw invalid("quantized_data, zero_point, scale and axis must be numeric") }
            let rank = data.shape.count
            let axis = axisValue < 0 ? axisValue + rank : axisValue
            guard axis >= 0 && axis < Swift.max(rank, 1) else { throw invalid("axis \(axisValue) is out of range") }
            let channels = rank == 0 ? 1 : data.shape[axis]
            guard z.count == 1 || z.count == channels, s.count == 1 || s.count == channels else {
                throw invalid("zero_point and scale need 1 or \(channels) values")
            }
            let inner = rank == 0 ? 1 : data.shape[(axis + 1)...].reduce(1, *)
            var values = [Float](repeating: 0, count: q.count)
            for i in 0..<q.count {
                let c = (i / inner) % channels
                values[i] = Float((q[i] - z[z.count == 1 ? 0 : c]) * s[s.count == 1 ? 0 : c])
            }
            return MILConstant(shape: data.shape, dataType: .float32, elements: .floats(values))
        }
    }
}
