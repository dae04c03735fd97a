import TesseraKernels

/// One argument of a constexpr op, read into memory: its declared element type, its shape
/// and its elements as `Float` (exact for every integer type coremltools compresses with).
struct ConstexprTensor {
    /// The element type (`float32` for a chained constexpr result).
    var dataType: MILDataType
    /// The shape.
    var shape: [Int]
    /// The elements, row-major.
    var values: [Float]

    /// Whether the elements are integers (quantized data, indices, masks).
    var isInteger: Bool {
        switch dataType {
        case .float16, .float32, .float64, .bfloat16, .float8E4M3FN, .float8E5M2, .string: false
        default: true
        }
    }
}

/// A constexpr op being decoded: reads its arguments and builds its errors.
struct ConstexprOperation {
    let operation: MILOperation
    let package: CoreMLPackage
    let known: [String: DenseConstant]

    /// `constexpr_lut_to_dense "name"`, how errors name the op.
    var label: String { "\(operation.type) \"\(operation.name ?? operation.outputs.first?.name ?? "?")\"" }

    /// An error naming the op.
    func error(_ message: String) -> ModelFormatError {
        ModelFormatError(.invalidSpecification, file: package.modelDisplayName, "\(label) \(message)")
    }

    /// Whether the op has the argument, as an input or an attribute.
    func has(_ name: String) -> Bool { operation.inputs[name] != nil || operation.attributes[name] != nil }

    /// The argument, or `nil` when the op does not have it.
    func optionalTensor(_ name: String) throws -> ConstexprTensor? {
        if let argument = operation.inputs[name] {
            guard argument.bindings.count == 1, let binding = argument.bindings.first else {
                throw error("has \(argument.bindings.count) bindings for \"\(name)\" (expected 1)")
            }
            switch binding {
            case .value(let value): return try tensor(value, argument: name)
            case .name(let variable): return try named(variable, argument: name)
            }
        }
        if let value = operation.attributes[name] { return try tensor(value, argument: name) }
        return nil
    }

    /// The argument; throws when the op does not have it.
    func tensor(_ name: String) throws -> ConstexprTensor {
        guard let tensor = try optionalTensor(name) else { throw error("has no argument \"\(name)\"") }
        return tensor
    }

    /// An integer scalar argument (`axis`, `vector_axis`).
    func optionalInteger(_ name: String) throws -> Int? {
        guard let tensor = try optionalTensor(name) else { return nil }
        guard tensor.values.count == 1, tensor.isInteger else {
            throw error("argument \"\(name)\" must be one integer, not \(tensor.dataType)\(tensor.shape)")
        }
        guard let value = Int(exactly: tensor.values[0]) else {
            throw error("argument \"\(name)\" is \(tensor.values[0]), not an integer Tessera can use")
        }
        return value
    }

    /// A string scalar argument (`output_dtype`).
    func string(_ name: String) throws -> String {
        let value: MILValue?
        switch operation.inputs[name]?.bindings.first {
        case .value(let literal)?: value = literal
        case .name(let variable)?: value = constValue(named: variable)
        case nil: value = operation.attributes[name]
        }
        guard let string = value?.stringScalar else { throw error("argument \"\(name)\" is not a string") }
        return string
    }

    /// A `shape` argument: non-negative sizes whose product fits an `Int`.
    func shape(_ name: String) throws -> [Int] {
        let tensor = try tensor(name)
        guard tensor.isInteger, tensor.shape.count <= 1 else {
            throw error("argument \"\(name)\" must be a list of integers, not \(tensor.dataType)\(tensor.shape)")
        }
        let shape = tensor.values.map { Int(exactly: $0) ?? -1 }
        guard shape.allSatisfy({ $0 >= 0 }), shape.checkedElementCount != nil else {
            throw error("argument \"\(name)\" is not a valid shape: \(tensor.values)")
        }
        return shape
    }

    /// Checks results against the shapes the op's outputs declare, where they declare one.
    func checkDeclaredShapes(_ results: [DenseConstant]) throws {
        guard results.count == operation.outputs.count else {
            throw error("has \(operation.outputs.count) outputs; it must have \(results.count)")
        }
        for (output, result) in zip(operation.outputs, results) {
            guard let declared = output.type.tensorType?.shape else { continue }
            guard declared == result.shape else {
                throw error("decodes to shape \(result.shape), but its output is declared as \(declared)")
            }
        }
    }

    // MARK: - Reading values

    /// A name bound to an earlier constexpr result or a `const` op.
    private func named(_ variable: String, argument: String) throws -> ConstexprTensor {
        if let constant = known[variable] {
            return ConstexprTensor(dataType: .float32, shape: constant.shape, values: constant.values)
        }
        if let value = constValue(named: variable) { return try tensor(value, argument: argument) }
        throw error("argument \"\(argument)\" names \"\(variable)\", which is neither a decoded constexpr nor a const")
    }

    /// The `val` of the `const` op that defines `variable`, searched in every function.
    private func constValue(named variable: String) -> MILValue? {
        guard let program = package.model.mlProgram else { return nil }
        for function in program.functions.values {
            for block in function.blockSpecializations.values {
                for op in block.operations where op.type == "const" && op.outputs.first?.name == variable {
                    return op.attributes["val"]
                }
            }
        }
        return nil
    }

    /// A literal or blob-file value, decoded to floats.
    private func tensor(_ value: MILValue, argument: String) throws -> ConstexprTensor {
        guard let type = value.type?.tensorType, let shape = type.shape, let count = type.elementCount else {
            throw error(
                "argument \"\(argument)\" is not a tensor of known shape (\(value.type.map { "\($0)" } ?? "no type"))")
        }
        let values: [Float]
        switch value.storage {
        case .immediate(.tensor(let storage)):
            values = try immediate(storage, type: type, count: count, argument: argument)
        case .blobFile(let reference):
            let (file, blob) = try package.blob(for: reference, type: type)
            values = try file.withUnsafeBytes(of: blob) { bytes in
                try decodeBytes(bytes, dataType: type.dataType, count: count, argument: argument)
            }
        default:
            throw error("argument \"\(argument)\" is not a tensor literal or a weight-file reference")
        }
        guard values.count == count else {
            throw error("argument \"\(argument)\" has \(values.count) elements but its type \(type) needs \(count)")
        }
        return ConstexprTensor(dataType: type.dataType, shape: shape, values: values)
    }

    /// An immediate tensor's elements as floats.
    private func immediate(_ storage: MILTensorStorage, type: MILTensorType, count: Int, argument: String) throws
        -> [Float]
    {
        switch storage {
        case .floats(let values): return values
        case .doubles(let values): return values.map { Float($0) }
        case .ints(let values):
            // uint16 travels in `ints` as its value; nothing to reinterpret.
            return values.map { Float($0) }
        case .longInts(let values):
            return values.map { type.dataType == .uint64 ? Float(UInt64(bitPattern: $0)) : Float($0) }
        case .bools(let values): return values.map { $0 ? 1 : 0 }
        case .bytes(let bytes):
            return try bytes.withUnsafeBytes { raw in
                try decodeBytes(raw, dataType: type.dataType, count: count, argument: argument)
            }
        case .strings, .empty:
            throw error("argument \"\(argument)\" holds no numbers")
        }
    }

    /// `count` elements of `dataType`, little-endian, sub-byte types packed LSB first.
    func decodeBytes(_ bytes: UnsafeRawBufferPointer, dataType: MILDataType, count: Int, argument: String) throws
        -> [Float]
    {
        guard let bits = dataType.bitWidth else { throw error("argument \"\(argument)\" is a string tensor") }
        let (totalBits, overflow) = count.multipliedReportingOverflow(by: bits)
        guard !overflow, (totalBits + 7) / 8 <= bytes.count else {
            throw error(
                "argument \"\(argument)\" needs \(count) \(dataType) elements but has only \(bytes.count) bytes; "
                    + "the model is truncated or corrupted")
        }
        func load<T: FixedWidthInteger>(_: T.Type, _ convert: (T) -> Float) -> [Float] {
            let width = MemoryLayout<T>.size
            return [Float](unsafeUninitializedCapacity: count) { output, initialized in
                for index in 0..<count {
                    output[index] = convert(
                        T(littleEndian: bytes.loadUnaligned(fromByteOffset: index * width, as: T.self)))
                }
                initialized = count
            }
        }
        switch dataType {
        case .float32: return load(UInt32.self) { Float(bitPattern: $0) }
        case .float16: return load(UInt16.self) { Float(Float16(bitPattern: $0)) }
        case .bfloat16: return load(UInt16.self) { Float(bitPattern: UInt32($0) << 16) }
        case .float64: return load(UInt64.self) { Float(Double(bitPattern: $0)) }
        case .int8: return load(Int8.self) { Float($0) }
        case .uint8, .bool: return load(UInt8.self) { Float($0) }
        case .int16: return load(Int16.self) { Float($0) }
        case .uint16: return load(UInt16.self) { Float($0) }
        case .int32: return load(Int32.self) { Float($0) }
        case .uint32: return load(UInt32.self) { Float($0) }
        case .int64: return load(Int64.self) { Float($0) }
        case .uint64: return load(UInt64.self) { Float($0) }
        case .uint1, .uint2, .uint3, .uint4, .uint6:
            return Self.unpackBits(bytes, bitWidth: bits, count: count).map { Float($0) }
        case .int4:
            return Self.unpackBits(bytes, bitWidth: 4, count: count).map { Float($0 >= 8 ? Int($0) - 16 : Int($0)) }
        case .float8E4M3FN: return load(UInt8.self) { Self.float8E4M3FN($0) }
        case .float8E5M2: return load(UInt8.self) { Self.float8E5M2($0) }
        case .string:
            throw error("argument \"\(argument)\" is \(dataType), which Tessera does not decode")
        }
    }

    /// An `fp8e4m3fn` value: sign, 4 exponent bits (bias 7), 3 mantissa bits; no infinities,
    /// and `S.1111.111` is NaN.
    static func float8E4M3FN(_ bits: UInt8) -> Float {
        let sign: Float = bits & 0x80 != 0 ? -1 : 1
        let exponent = Int(bits >> 3) & 0xF
        let mantissa = Float(bits & 0x7)
        if exponent == 0xF && bits & 0x7 == 0x7 { return .nan }
        if exponent == 0 { return sign * mantissa / 8 * Float(sign: .plus, exponent: -6, significand: 1) }
        return sign * (1 + mantissa / 8) * Float(sign: .plus, exponent: exponent - 7, significand: 1)
    }

    /// An `fp8e5m2` value: sign, 5 exponent bits (bias 15), 2 mantissa bits, IEEE 754
    /// infinities and NaNs (the upper byte of an fp16).
    static func float8E5M2(_ bits: UInt8) -> Float {
        Float(Float16(bitPattern: UInt16(bits) << 8))
    }

    /// `count` unsigned `bitWidth`-bit values from a little-endian bit stream (element `i`
    /// in bits `i·bitWidth ..< (i+1)·bitWidth`, least significant first). The caller checks
    /// that `bytes` holds them.
    static func unpackBits(_ bytes: UnsafeRawBufferPointer, bitWidth: Int, count: Int) -> [UInt8] {
        let mask = (1 << bitWidth) - 1
        return [UInt8](unsafeUninitializedCapacity: count) { output, initialized in
            for index in 0..<count {
                let bit = index * bitWidth
                let byte = bit >> 3
                let shift = bit & 7
                var word = Int(bytes[byte])
                if shift + bitWidth > 8 { word |= Int(bytes[byte + 1]) << 8 }
                output[index] = UInt8((word >> shift) & mask)
            }
            initialized = count
        }
    }
}
