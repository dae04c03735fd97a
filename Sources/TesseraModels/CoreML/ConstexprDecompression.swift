/// A constant's dense value: a shape and its elements as `Float`, row-major.
///
/// What ``ConstexprDecompression/decode(_:in:known:)`` returns for a compressed weight, and
/// what an earlier constexpr op's result is passed back in as when ops chain.
package struct DenseConstant: Sendable, Equatable {
    /// The tensor's shape.
    package var shape: [Int]
    /// The elements, row-major; `values.count` is the product of `shape`.
    package var values: [Float]

    /// Creates a dense constant.
    package init(shape: [Int], values: [Float]) {
        self.shape = shape
        self.values = values
    }
}

/// Decodes the `constexpr_*` ops coremltools emits for compressed weights into dense
/// Float32 tensors, once, at load.
///
/// | op | opset | arguments | result |
/// |---|---|---|---|
/// | `constexpr_affine_dequantize` | iOS16 | `quantized_data`, `zero_point`, `scale`, `axis` | `(q − zero_point) · scale`, per channel along `axis` |
/// | `constexpr_cast` | iOS16 | `source_val` (fp16), `output_dtype` | the values, widened |
/// | `constexpr_lut_to_dense` | iOS16 | `lut` (`2ⁿ` entries), `indices` (uint8, n-bit packed), `shape` | `lut[index]` |
/// | `constexpr_lut_to_dense` | iOS18 | `indices` (uint1…uint8, dense shape), `lut` (per block, vector), `vector_axis` | per-block palettes, optionally vectors |
/// | `constexpr_sparse_to_dense` | iOS16 | `nonzero_data`, `mask` (uint8, bit-packed), `shape` | zeros with the mask's bits set from `nonzero_data` |
/// | `constexpr_sparse_to_dense` | iOS18 | `nonzero_data`, `mask` (uint1, dense shape) | as above |
/// | `constexpr_blockwise_shift_scale` | iOS18 | `data`, `scale`, optional `offset` | `(data − offset) · scale`, per block |
/// | `constexpr_lut_to_sparse` | iOS18 | `indices_mask` (uint1), `indices_nonzero_data`, `lut`, `vector_axis` | two outputs: the mask (expanded along `vector_axis` for vectors) and the palettized set values |
/// | `constexpr_sparse_blockwise_shift_scale` | iOS18 | `data_mask` (uint1), `nonzero_data`, `scale`, optional `offset` | two outputs: the mask and the dequantized set values |
///
/// Data may be any integer type coremltools writes (int4 … uint8, sub-byte types packed),
/// fp16, fp32, or the fp8 types `fp8e4m3fn` (bias 7, no infinities) and `fp8e5m2` (bias 15).
///
/// Up to iOS17 the arguments are op *attributes*; from iOS18 they are *inputs*: literal
/// values, or names of earlier constexpr results (iOS18 ops chain, e.g. a
/// `constexpr_blockwise_shift_scale` that dequantizes a `constexpr_lut_to_dense`'s palette),
/// which the caller passes in `known`. A name that is not in `known` is looked up among the
/// program's `const` ops. Bit-packed data is read as coremltools writes it: element `i`
/// occupies bits `i·n ..< (i+1)·n` of the byte stream, least significant bit first.
///
/// Results are computed in Float32; when the op's scale (or palette) is fp16, the result
/// is rounded to fp16 as Core ML computes it, then widened.
///
/// ```swift
/// var known: [String: DenseConstant] = [:]
/// for op in block.operations where ConstexprDecompression.handles(op.type) {
///     known[op.outputs[0].name] = try ConstexprDecompression.decode(op, in: package, known: known)
/// }
/// ```
package enum ConstexprDecompression {
    /// The op types this decodes.
    package static let opTypes: Set<String> = [
        "constexpr_affine_dequantize", "constexpr_cast", "constexpr_lut_to_dense",
        "constexpr_sparse_to_dense", "constexpr_blockwise_shift_scale", "constexpr_lut_to_sparse",
        "constexpr_sparse_blockwise_shift_scale",
    ]

    /// Whether `opType` is one of the constexpr ops this decodes.
    package static func handles(_ opType: String) -> Bool { opTypes.contains(opType) }

    /// The dense Float32 value of a constexpr op.
    ///
    /// - Parameters:
    ///   - operation: The op; its arguments are read from its attributes (≤ iOS17) or inputs
    ///     (iOS18), literal or in the package's weight files.
    ///   - package: The package whose weight files and program the arguments refer to.
    ///   - known: Already-decoded constexpr results by output name.
    /// - Throws: ``ModelFormatError`` naming the op for an unknown op type, a missing or
    ///   mistyped argument, sizes that do not agree, an index out of range, a bad bit width,
    ///   or a blob that is truncated or corrupted.
    package static func decode(
        _ operation: MILOperation, in package: CoreMLPackage, known: [String: DenseConstant]
    ) throws -> DenseConstant {
        try decodeOutputs(operation, in: package, known: known)[0]
    }

    /// The dense Float32 value of each output of a constexpr op: one for most, two (the mask
    /// as zeros and ones, then the set values) for `constexpr_lut_to_sparse` and
    /// `constexpr_sparse_blockwise_shift_scale`.
    ///
    /// - Throws: as ``decode(_:in:known:)``.
    package static func decodeOutputs(
        _ operation: MILOperation, in package: CoreMLPackage, known: [String: DenseConstant]
    ) throws -> [DenseConstant] {
        let op = ConstexprOperation(operation: operation, package: package, known: known)
        switch operation.type {
        case "constexpr_lut_to_sparse":
            let (mask, data) = try op.lutToSparse()
            try op.checkDeclaredShapes([mask, data])
            return [mask, data]
        case "constexpr_sparse_blockwise_shift_scale":
            let (mask, data) = try op.sparseBlockwiseShiftScale()
            try op.checkDeclaredShapes([mask, data])
            return [mask, data]
        default: break
        }
        let result: DenseConstant
        switch operation.type {
        case "constexpr_affine_dequantize": result = try op.affineDequantize()
        case "constexpr_cast": result = try op.cast()
        case "constexpr_lut_to_dense":
            result = try op.has("shape") ? op.lutToDenseIOS16() : op.lutToDenseIOS18()
        case "constexpr_sparse_to_dense":
            result = try op.has("shape") ? op.sparseToDenseIOS16() : op.sparseToDenseIOS18()
        case "constexpr_blockwise_shift_scale": result = try op.blockwiseShiftScale()
        default: throw op.error("is not a constexpr op Tessera decodes")
        }
        try op.checkDeclaredShapes([result])
        return [result]
    }
}
