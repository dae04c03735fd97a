import TesseraTensor

/// The iOS 17 activation-quantization ops, on tensors computed at run time:
///
/// - `quantize`: `clip(round(input / scale) + zero_point)` into the range of `output_dtype`
///   (`int8` −128…127, `uint8` 0…255), rounding halves to even (as PyTorch's
///   `quantize_per_tensor` / `quantize_per_channel`, which coremltools' tests compare with).
/// - `dequantize`: `(input − zero_point) · scale`.
///
/// `scale` and the optional `zero_point` (0 when absent) are scalars (per tensor) or vectors
/// along `axis` (per channel; the vector's length must be `input.shape[axis]`). The quantized
/// values are carried as Int32 (Tessera's integer compute type) holding exactly the int8 or
/// uint8 values, and are converted to the declared type where they leave the program.
extension MILOp {
    static let quantizationOps: [MILOp] = [
        MILOp("quantize", batch: .elementwise, cost: .elementwise) { lowering in
            let input = try lowering.tensor("input")
            let parameters = try QuantizationParameters(lowering)
            let dtype = try lowering.required(lowering.string("output_dtype"), "output_dtype")
            let bounds: ClosedRange<Float>
            switch dtype {
            case "int8": bounds = -128...127
            case "uint8": bounds = 0...255
            default: throw lowering.invalid("output_dtype '\(dtype)' must be 'int8' or 'uint8'")
            }
            return { args in
                let x = args[input].asFloat
                let (scale, zeroPoint) = try parameters.broadcastable(to: x)
                var q = (x / scale).round()
                if let zeroPoint { q = q + zeroPoint }
                return [q.clamped(to: bounds).asInt32]
            }
        },
        MILOp("dequantize", batch: .elementwise, cost: .elementwise) { lowering in
            let input = try lowering.tensor("input")
            let parameters = try QuantizationParameters(lowering)
            return { args in
                let x = args[input].asFloat
                let (scale, zeroPoint) = try parameters.broadcastable(to: x)
                return [(zeroPoint.map { x - $0 } ?? x) * scale]
            }
        },
    ]
}

/// The `scale`, `zero_point` and `axis` of a `quantize` or `dequantize`, read at load.
struct QuantizationParameters: Sendable {
    /// The scale's elements (one, or one per channel).
    var scale: [Float]
    /// The zero point's elements, `nil` when the op has none.
    var zeroPoint: [Float]?
    /// The channel axis (as written, possibly negative), `nil` for per-tensor parameters.
    var axis: Int?

    /// Reads the parameters of the op `lowering` lowers.
    ///
    /// - Throws: ``ModelFormatError`` when `scale` is missing, a parameter is computed at run
    ///   time, the two have different lengths, or a vector comes without an `axis`.
    init(_ lowering: OperationLowering) throws {
        guard let scale = try lowering.constant("scale")?.doubles else {
            throw lowering.invalid("the required parameter 'scale' is missing or not numeric")
        }
        self.scale = scale.map { Float($0) }
        zeroPoint = try lowering.constant("zero_point")?.doubles?.map { Float($0) }
        axis = try lowering.int("axis")
        if let zeroPoint, zeroPoint.count != self.scale.count {
            throw lowering.invalid("zero_point has \(zeroPoint.count) elements, scale \(self.scale.count)")
        }
        if self.scale.count != 1 && axis == nil {
            throw lowering.invalid("a scale of \(self.scale.count) elements needs an axis")
        }
    }

    /// The scale and zero point as tensors that broadcast against `x`: rank-0 per tensor,
    /// `[1, …, C, …, 1]` along the axis per channel.
    ///
    /// - Throws: ``OperandError`` when the axis is out of range for `x` or the vectors'
    ///   length is not `x.shape[axis]`.
    func broadcastable(to x: MLTensor) throws -> (MLTensor, MLTensor?) {
        var shape: [Int] = []
        if let axis {
            try require((-x.rank..<x.rank).contains(axis), "axis \(axis) is out of range for input \(x.shape)")
            let normalized = axis < 0 ? axis + x.rank : axis
            try require(
                scale.count == 1 || scale.count == x.shape[normalized],
                "scale has \(scale.count) elements but input \(x.shape) has \(x.shape[normalized]) along axis \(axis)")
            shape = [Int](repeating: 1, count: x.rank)
            shape[normalized] = scale.count
        }
        let scaleTensor = MLTensor(shape: shape, scalars: scale, scalarType: Float.self)
        let zeroPointTensor = zeroPoint.map { MLTensor(shape: shape, scalars: $0, scalarType: Float.self) }
        return (scaleTensor, zeroPointTensor)
    }
}
