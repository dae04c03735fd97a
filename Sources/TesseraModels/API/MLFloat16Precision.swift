/// How a model computes the values its ML program types as `fp16`. **Tessera extension**:
/// Core ML has no such setting (it picks per compute device), set it with
/// ``MLModelConfiguration/float16Precision``.
///
/// Core ML's typed-execution contract makes a declared type the *minimum* precision: on the
/// CPU most ops of an fp16 program run in Float32, while the GPU and the Neural Engine compute
/// each op in fp16. Tessera runs on the CPU and computes in Float32 by default
/// (``float32``), which is what Core ML's CPU gives and the more accurate result;
/// ``float16`` rounds every fp16-typed value to fp16 (the function's fp16 inputs and every
/// result an op declares fp16, nested blocks included), for reproducing the results of an
/// fp16 engine. Accumulations inside one op (a convolution's or a matmul's sums) stay Float32
/// either way. The setting has no effect on fp32 programs, NeuralNetwork models or classic
/// models.
///
/// ```swift
/// let configuration = MLModelConfiguration()
/// configuration.float16Precision = .float16
/// let model = try MLModel(contentsOf: compiledURL, configuration: configuration)
/// ```
public enum MLFloat16Precision: Sendable, Hashable {
    /// fp16-typed values are computed and kept in Float32 (the default; Core ML's CPU).
    case float32
    /// fp16-typed values are rounded to fp16 after every op that produces one (Core ML's GPU
    /// and Neural Engine).
    case float16
}
