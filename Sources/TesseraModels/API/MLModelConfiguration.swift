import TesseraTensor

/// Settings for loading a model: the compute units, the function to run, a display name, and
/// (a Tessera extension) the precision of fp16 values.
///
/// A model keeps a copy of the configuration it was loaded with; changing the object later
/// does not change the model.
///
/// ```swift
/// let configuration = MLModelConfiguration()
/// configuration.computeUnits = .cpuOnly
/// let model = try await MLModel.load(contentsOf: compiledURL, configuration: configuration)
/// ```
public final class MLModelConfiguration {
    /// The processing units the model may use; default `.all`. Tessera runs on the CPU
    /// whatever the value.
    public var computeUnits: MLComputeUnits = .all
    /// Whether GPU accumulation may use 16 bits; default `false`. No effect on Linux.
    public var allowLowPrecisionAccumulationOnGPU = false
    /// A name for logs and profiles; default `nil`.
    public var modelDisplayName: String?
    /// The function of a multi-function ML program to run; `nil` (the default) runs the
    /// model's default function (`main`).
    public var functionName: String?
    /// How an ML program's fp16-typed values are computed; default ``MLFloat16Precision/float32``
    /// (Float32, as Core ML's CPU). **Tessera extension**: Core ML has no such setting.
    ///
    /// ```swift
    /// configuration.float16Precision = .float16  // round fp16 values as a GPU would
    /// ```
    public var float16Precision: MLFloat16Precision = .float32
    /// **Tessera extension.** The most bytes one prediction of the model may hold in results
    /// and intermediates at once; `nil` (the default) sets no per-model limit.
    ///
    /// Before a prediction computes anything, Tessera plans it and reserves its peak (the
    /// results of every step alive at once, views excluded; inputs and weights, which exist
    /// already, are not counted). A plan that needs more than this limit, or more than the
    /// process-wide limit leaves room for, throws ``MLModelError`` `.generic` saying how much
    /// it needs and which limit refused it; nothing is computed and the model goes on
    /// predicting other inputs. The process-wide limit is the `TESSERA_MEMORY_LIMIT`
    /// environment variable (bytes, or with a `K`, `M` or `G` suffix) read at the first
    /// computation, else 80% of physical memory. Values a prediction makes element by element
    /// while it builds its graph (a range's elements, random draws, band masks) count against
    /// this limit too, as do those the load makes: one that would need more throws before it
    /// is made.
    ///
    /// ```swift
    /// let configuration = MLModelConfiguration()
    /// configuration.memoryLimit = 256 << 20   // 256 MiB per prediction
    /// let model = try MLModel(contentsOf: url, configuration: configuration)
    /// ```
    public var memoryLimit: Int?

    /// Creates a configuration with the default values.
    public init() {}

    /// A value copy, so a model is unaffected by later changes to the object.
    struct Snapshot: Sendable {
        var computeUnits: MLComputeUnits
        var allowLowPrecisionAccumulationOnGPU: Bool
        var modelDisplayName: String?
        var functionName: String?
        var float16Precision: MLFloat16Precision
        var memoryLimit: Int?
    }

    var snapshot: Snapshot {
        Snapshot(
            computeUnits: computeUnits, allowLowPrecisionAccumulationOnGPU: allowLowPrecisionAccumulationOnGPU,
            modelDisplayName: modelDisplayName, functionName: functionName, float16Precision: float16Precision,
            memoryLimit: memoryLimit)
    }

    convenience init(_ snapshot: Snapshot) {
        self.init()
        computeUnits = snapshot.computeUnits
        allowLowPrecisionAccumulationOnGPU = snapshot.allowLowPrecisionAccumulationOnGPU
        modelDisplayName = snapshot.modelDisplayName
        functionName = snapshot.functionName
        float16Precision = snapshot.float16Precision
        memoryLimit = snapshot.memoryLimit
    }
}
