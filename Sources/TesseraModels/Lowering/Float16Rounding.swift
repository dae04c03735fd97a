import TesseraTensor

/// How a lowered function treats values an ML program types as `fp16`.
///
/// Tessera computes every floating-point value in Float32. Core ML's contract for typed ML
/// programs makes the declared type the *minimum* precision: "a float 16 typed model may run
/// with float 32 precision as well, depending on the availability of the float 16 version of
/// the op", and on the CPU only a few ops (convolution among them) have fp16 versions
/// (coremltools, *Typed Execution*). So Float32 throughout is a result Core ML itself may
/// give on the CPU, and the more accurate one; it is the default. ``roundedToFloat16``
/// instead rounds every fp16-typed value (function inputs and each op's results) to the
/// nearest fp16, as an engine that computes each op in fp16 with a wider accumulator (Core
/// ML's GPU and Neural Engine) does, for reproducing such results; accumulations inside an op
/// (a convolution's sums) stay Float32 either way.
package enum Float16Rounding: Sendable, Equatable {
    /// fp16-typed values are computed and kept in Float32 (the default).
    case none
    /// fp16-typed values are rounded to fp16 after every op that produces one.
    case roundedToFloat16

    /// `compute` with each result whose declared type is fp16 rounded, when rounding is on;
    /// `compute` itself otherwise (no cost per prediction).
    func wrapping(_ compute: @escaping LoweredCompute, outputs: [MILNamedValueType]) -> LoweredCompute {
        guard self == .roundedToFloat16 else { return compute }
        let rounds = outputs.map { $0.type.tensorType?.dataType == .float16 }
        guard rounds.contains(true) else { return compute }
        return { args in
            let results = try compute(args)
            return results.enumerated().map { index, result in
                index < rounds.count && rounds[index] ? Float16Rounding.rounded(result) : result
            }
        }
    }

    /// A Float32 tensor rounded to the nearest fp16 (ties to even), still Float32; other
    /// tensors as they are.
    static func rounded(_ tensor: MLTensor) -> MLTensor {
        tensor.kernelType == .float32 ? tensor.cast(to: Float16.self).cast(to: Float.self) : tensor
    }
}
