/// The `constexpr_*` ops whose result is a constant known at load: Tessera evaluates them
/// once, like a const op, so the weights they decompress are plain Float32 tensors.
extension LoweringContext {
    /// The op types evaluated at load.
    static let constexprTypes: Set<String> = [
        "constexpr_affine_dequantize", "constexpr_cast", "constexpr_lut_to_dense", "constexpr_sparse_to_dense",
    ]

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
        case "constexpr_lut_to_dense", "constexpr_sparse_to_dense":
            // iOS 16 forms: packed bits (LSB first), a palette or the non-zero values, a shape.
            guard let shape = try parameter("shape").integers, shape.allSatisfy({ $0 >= 0 }) else {
                throw invalid("shape must be non-negative integers")
            }
            let count = shape.reduce(1, *)
            let isLUT = operation.type == "constexpr_lut_to_dense"
            guard let bytes = try parameter(isLUT ? "indices" : "mask").integers,
                let table = try parameter(isLUT ? "lut" : "nonzero_data").doubles
            else { throw invalid("the packed bits and values must be numeric") }
            let bits = isLUT ? table.count.trailingZeroBitCount : 1
            guard !isLUT || (table.count.nonzeroBitCount == 1 && bits >= 1 && bits <= 8) else {
                throw invalid("the palette has \(table.count) entries, not a power of two up to 256")
            }
            guard bytes.count * 8 >= count * bits else {
                throw invalid("\(bytes.count) bytes of packed bits cannot hold \(count) elements")
            }
            func field(_ i: Int) -> Int {
                var value = 0
                for bit in 0..<bits {
                    let position = i * bits + bit
                    value |= ((bytes[position / 8] >> (position % 8)) & 1) << bit
                }
                return value
            }
            var values = [Float](repeating: 0, count: count)
            var next = 0
            for i in 0..<count {
                if isLUT {
                    values[i] = Float(table[field(i)])
                } else if field(i) == 1 {
                    guard next < table.count else { throw invalid("the mask sets more bits than there are values") }
                    values[i] = Float(table[next])
                    next += 1
                }
            }
            return MILConstant(shape: shape, dataType: .float32, elements: .floats(values))
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
