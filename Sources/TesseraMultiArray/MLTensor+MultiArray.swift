import Foundation
import TesseraKernels
import TesseraTensor

extension MLTensor {
    /// Creates a tensor from a multi-array's elements, without copying them. **Tessera
    /// compatibility extension**: Core ML has no such initializer (write
    /// `MLTensor(MLShapedArray<Float>(multiArray))` there); code written for Tessera's seeds
    /// uses it, so Tessera provides it.
    ///
    /// The tensor has the multi-array's shape and its scalar type (`Float` for `.float32`,
    /// `Float16`, `Int32`, `Int8`, and `Double` for `.double`, a Tessera extension). It reads
    /// the multi-array's memory through its strides (transposed and padded layouts need no
    /// copy); the multi-array copies its memory before its next write, so the tensor keeps the
    /// values it was created with.
    ///
    /// ```swift
    /// let logits = MLTensor(output)                       // output: MLMultiArray [1, 1000]
    /// let best = await logits.argmax().shapedArray(of: Int32.self).scalar
    /// ```
    public init(_ multiArray: MLMultiArray) {
        switch multiArray.dataType {
        case .float32: self.init(MLShapedArray<Float>(multiArray))
        case .float16: self.init(MLShapedArray<Float16>(multiArray))
        case .double: self.init(MLShapedArray<Double>(multiArray))
        case .int32: self.init(MLShapedArray<Int32>(multiArray))
        case .int8: self.init(MLShapedArray<Int8>(multiArray))
        }
    }

    /// Computes the tensor and returns its elements as a multi-array. **Tessera extension**
    /// (Core ML's route is `MLMultiArray(await tensor.shapedArray(of: Float.self))`, which works
    /// too).
    ///
    /// The data type is `dataType`, or by default the tensor's own (`Float` → `.float32`,
    /// `Float16` → `.float16`, `Int32` → `.int32`, `Int8` → `.int8`, `Double` → `.double`);
    /// tensors of other scalar types become `.int32`, and `UInt32` becomes `.double`, both
    /// exact. When no conversion is needed the multi-array shares the result's memory (no copy,
    /// whatever its strides); a conversion is fused into the computation.
    ///
    /// ```swift
    /// let output = await (x * 2).multiArray()                   // .float32
    /// let halves = await x.multiArray(dataType: .float16)       // converted while computing
    /// ```
    ///
    /// The work runs on a Dispatch worker, never blocking a thread of Swift's cooperative pool.
    public func multiArray(dataType: MLMultiArrayDataType? = nil) async -> MLMultiArray {
        let (tensor, type) = prepareForMultiArray(dataType)
        let computed = await tensor.materialized()
        return computed.makeMultiArray(type)
    }

    /// The synchronous overload of ``multiArray(dataType:)``: Swift picks it in synchronous
    /// code; it blocks the calling thread while the tensor is computed. **Tessera extension.**
    ///
    /// ```swift
    /// let output = (x * 2).multiArray()
    /// ```
    public func multiArray(dataType: MLMultiArrayDataType? = nil) -> MLMultiArray {
        let (tensor, type) = prepareForMultiArray(dataType)
        return tensor.materialized().makeMultiArray(type)
    }

    /// The tensor cast to the target data type (lazily, so the cast fuses) and that type.
    private func prepareForMultiArray(_ requested: MLMultiArrayDataType?) -> (MLTensor, MLMultiArrayDataType) {
        let natural: MLMultiArrayDataType
        switch scalarType {
        case is Float.Type: natural = .float32
        case is Float16.Type: natural = .float16
        case is Int32.Type: natural = .int32
        case is Int8.Type: natural = .int8
        case is Double.Type, is UInt32.Type: natural = .double
        default: natural = .int32
        }
        let type = requested ?? natural
        if type == natural && scalarType.kernelScalarType == type.kernelScalarType { return (self, type) }
        switch type {
        case .float32: return (cast(to: Float.self), type)
        case .float16: return (cast(to: Float16.self), type)
        case .double: return (cast(to: Double.self), type)
        case .int32: return (cast(to: Int32.self), type)
        case .int8: return (cast(to: Int8.self), type)
        }
    }

    /// Wraps the computed tensor's memory (no copy) in a multi-array of `type`.
    private func makeMultiArray(_ type: MLMultiArrayDataType) -> MLMultiArray {
        switch type {
        case .float32: return MLMultiArray(shapedArray(of: Float.self))
        case .float16: return MLMultiArray(shapedArray(of: Float16.self))
        case .double: return MLMultiArray(shapedArray(of: Double.self))
        case .int32: return MLMultiArray(shapedArray(of: Int32.self))
        case .int8: return MLMultiArray(shapedArray(of: Int8.self))
        }
    }
}
