import TesseraTensor

/// A constant of a MIL program decoded once at load: a weight, or a parameter such as
/// `axes`, `pad_type` or `strides`.
///
/// Elements are kept in the type Tessera computes in: every floating-point type as `Float`,
/// every integer type as `Int32` (64-bit values are clamped), booleans and strings as such.
struct MILConstant: Sendable {
    /// The decoded elements.
    enum Elements: Sendable {
        case floats([Float])
        /// A Float32 weight adopted from the mapped weight file without a copy (see
        /// `CoreMLPackage.mappedFloat32Tensor`); read as numbers only when a handler needs them.
        case mappedFloats(MLTensor)
        case ints([Int32])
        case bools([Bool])
        case strings([String])
    }

    /// The shape (`[]` for a scalar).
    var shape: [Int]
    /// The declared element type.
    var dataType: MILDataType
    /// The elements, row-major.
    var elements: Elements

    /// The number of elements.
    var count: Int {
        switch elements {
        case .floats(let v): v.count
        case .mappedFloats(let t): t.scalarCount
        case .ints(let v): v.count
        case .bools(let v): v.count
        case .strings(let v): v.count
        }
    }

    /// The elements as integers (floats truncated, booleans 0 or 1), or `nil` for strings.
    var integers: [Int]? {
        func truncated(_ v: [Float]) -> [Int]? {
            v.allSatisfy { $0.isFinite && Swift.abs($0) < 1e15 } ? v.map { Int($0) } : nil
        }
        switch elements {
        case .floats(let v): return truncated(v)
        case .mappedFloats(let t): return truncated(t.scalars(of: Float.self))
        case .ints(let v): return v.map(Int.init)
        case .bools(let v): return v.map { $0 ? 1 : 0 }
        case .strings: return nil
        }
    }

    /// The elements as `Double`s, or `nil` for strings.
    var doubles: [Double]? {
        switch elements {
        case .floats(let v): v.map(Double.init)
        case .mappedFloats(let t): t.scalars(of: Float.self).map(Double.init)
        case .ints(let v): v.map(Double.init)
        case .bools(let v): v.map { $0 ? 1 : 0 }
        case .strings: nil
        }
    }

    /// The elements as booleans (non-zero is true), or `nil` for strings.
    var booleans: [Bool]? {
        switch elements {
        case .bools(let v): v
        default: doubles?.map { $0 != 0 }
        }
    }

    /// The elements of a float constant (copied out of a mapped weight), or `nil` otherwise.
    var floatValues: [Float]? {
        switch elements {
        case .floats(let v): v
        case .mappedFloats(let t): t.scalars(of: Float.self)
        default: nil
        }
    }

    /// The strings, or `nil` when the constant holds numbers.
    var strings: [String]? {
        if case .strings(let v) = elements { return v }
        return nil
    }

    /// The constant as a tensor of the compute type for its elements (float32, int32 or bool).
    ///
    /// - Throws: ``OperandError`` for string constants, which have no tensor form.
    func tensor() throws -> MLTensor {
        switch elements {
        case .floats(let v): return MLTensor.modelConstant(shape: shape, scalars: v)
        case .mappedFloats(let t): return t
        case .ints(let v): return MLTensor(shape: shape, scalars: v, scalarType: Int32.self)
        case .bools(let v): return MLTensor(shape: shape, scalars: v, scalarType: Bool.self)
        case .strings: throw OperandError("a string constant cannot be a tensor operand")
        }
    }
}

extension MILConstant {
    /// Decodes a MIL value: an immediate tensor or a blob in one of the package's weight files.
    ///
    /// - Throws: ``ModelFormatError`` when the value has no tensor type with a known shape,
    ///   when its data does not match the shape, or when its type is one Tessera does not read.
    init(_ value: MILValue, in package: borrowing CoreMLPackage, what: @autoclosure () -> String) throws {
        let file = package.modelDisplayName
        guard let type = value.type?.tensorType, let shape = type.shape, let count = type.elementCount else {
            throw ModelFormatError(
                .invalidSpecification, file: file, "\(what()) has no tensor type with a known shape")
        }
        self.shape = shape
        dataType = type.dataType
        func mismatch(_ stored: Int) -> ModelFormatError {
            ModelFormatError(
                .invalidSpecification, file: file, "\(what()) is \(type) (\(count) elements) but stores \(stored)")
        }
        switch value.storage {
        case .blobFile(let reference):
            // Float32 blobs (all float weights of a compiled model) are adopted in place.
            if let mapped = try package.mappedFloat32Tensor(for: reference, type: type) {
                guard mapped.scalarCount == count else { throw mismatch(mapped.scalarCount) }
                elements = .mappedFloats(mapped)
                return
            }
            let (weights, blob) = try package.blob(for: reference, type: type)
            let floats = try weights.floatValues(of: blob)
            guard floats.count == count else { throw mismatch(floats.count) }
            switch type.dataType {
            case .float16, .float32: elements = .floats(floats)
            default: elements = .ints(try MILConstant.int32s(floats, type: type, file: file, what: what()))
            }
        case .immediate(.tensor(let storage)):
            elements = try MILConstant.elements(of: storage, type: type, file: file, what: what())
            guard self.count == count else { throw mismatch(self.count) }
        case .immediate, .none:
            throw ModelFormatError(.invalidSpecification, file: file, "\(what()) is not a tensor value")
        }
    }

    /// Floating-point values stored for an integer tensor, rounded toward zero; throws
    /// ``ModelFormatError`` for a value that is not finite or beyond Int32 (which a conversion
    /// would trap on).
    private static func int32s<T: BinaryFloatingPoint>(
        _ values: [T], type: MILTensorType, file: String, what: @autoclosure () -> String
    ) throws -> [Int32] {
        try values.map { value in
            guard value.isFinite, let integer = Int32(exactly: value.rounded(.towardZero)) else {
                throw ModelFormatError(
                    .invalidSpecification, file: file,
                    "\(what()) is \(type) but stores \(value), which \(type.dataType) cannot hold")
            }
            return integer
        }
    }

    /// The elements of an immediate tensor in the field coremltools chose for `type`.
    private static func elements(
        of storage: MILTensorStorage, type: MILTensorType, file: String, what: @autoclosure () -> String
    ) throws -> Elements {
        let isFloat = [.float16, .float32, .float64, .bfloat16].contains(type.dataType)
        switch storage {
        case .floats(let v): return isFloat ? .floats(v) : .ints(try int32s(v, type: type, file: file, what: what()))
        case .doubles(let v):
            return isFloat ? .floats(v.map { Float($0) }) : .ints(try int32s(v, type: type, file: file, what: what()))
        case .ints(let v):
            if type.dataType == .bool { return .bools(v.map { $0 != 0 }) }
            return isFloat ? .floats(v.map { Float($0) }) : .ints(v)
        case .longInts(let v):
            let clamped = v.map { Int32(clamping: $0) }
            return isFloat ? .floats(v.map { Float($0) }) : .ints(clamped)
        case .bools(let v): return .bools(v)
        case .strings(let v): return .strings(v)
        case .empty: return isFloat ? .floats([]) : .ints([])
        case .bytes(let bytes):
            switch type.dataType {
            case .float16:
                guard bytes.count % 2 == 0 else { break }
                return .floats(
                    stride(from: 0, to: bytes.count, by: 2).map {
                        Float(Float16(bitPattern: UInt16(bytes[$0]) | UInt16(bytes[$0 + 1]) << 8))
                    })
            case .int8: return .ints(bytes.map { Int32(Int8(bitPattern: $0)) })
            case .uint8: return .ints(bytes.map { Int32($0) })
            case .bool: return .bools(bytes.map { $0 != 0 })
            case .uint32:
                guard bytes.count % 4 == 0 else { break }
                return .ints(
                    stride(from: 0, to: bytes.count, by: 4).map { i in
                        let v =
                            UInt32(bytes[i]) | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2]) << 16
                            | UInt32(bytes[i + 3]) << 24
                        return Int32(clamping: v)
                    })
            default: break
            }
            throw ModelFormatError(
                .unsupportedModelType, file: file,
                "\(what()) stores \(type.dataType) data as raw bytes, which Tessera does not read")
        }
    }
}
