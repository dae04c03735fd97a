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
    /// exact. For the tensor's own type the multi-array shares the result's memory (no copy,
    /// whatever its strides); another type is converted in one vectorised pass into a
    /// contiguous array.
    ///
    /// ```swift
    /// let output = await (x * 2).multiArray()                   // .float32, no copy
    /// let halves = await x.multiArray(dataType: .float16)       // one converting pass
    /// ```
    ///
    /// The work runs on the calling task's thread with no thread hop, as for
    /// `shapedArray(of:)`.
    public func multiArray(dataType: MLMultiArrayDataType? = nil) async -> MLMultiArray {
        let (tensor, natural) = prepareForMultiArray()
        let computed = await tensor.materialized()
        return computed.makeMultiArray(natural, converting: dataType ?? natural)
    }

    /// The synchronous overload of ``multiArray(dataType:)``: Swift picks it in synchronous
    /// code; it blocks the calling thread while the tensor is computed. **Tessera extension.**
    ///
    /// ```swift
    /// let output = (x * 2).multiArray()
    /// ```
    public func multiArray(dataType: MLMultiArrayDataType? = nil) -> MLMultiArray {
        let (tensor, natural) = prepareForMultiArray()
        return tensor.materialized().makeMultiArray(natural, converting: dataType ?? natural)
    }

    /// The tensor in a scalar type a multi-array can hold (a lazy cast for the others), and
    /// that data type.
    private func prepareForMultiArray() -> (MLTensor, MLMultiArrayDataType) {
        switch scalarType {
        case is Float.Type: return (self, .float32)
        case is Float16.Type: return (self, .float16)
        case is Int32.Type: return (self, .int32)
        case is Int8.Type: return (self, .int8)
        case is Double.Type: return (self, .double)
        case is UInt32.Type: return (cast(to: Double.self), .double)
        default: return (cast(to: Int32.self), .int32)
        }
    }

    /// Wraps the computed tensor's memory (no copy) in a multi-array of `natural` type, then
    /// converts it to `type` if they differ.
    ///
    /// Converting after the computation rather than casting inside the graph: the graph's
    /// Float32 → Float16 cast ran at ~18 ns per element on T10, the vectorised converter at ~0.3.
    private func makeMultiArray(_ natural: MLMultiArrayDataType, converting type: MLMultiArrayDataType) -> MLMultiArray
    {
        let shared: MLMultiArray
        switch natural {
        case .float32: shared = MLMultiArray(shapedArray(of: Float.self))
        case .float16: shared = MLMultiArray(shapedArray(of: Float16.self))
        case .double: shared = MLMultiArray(shapedArray(of: Double.self))
        case .int32: shared = MLMultiArray(shapedArray(of: Int32.self))
        case .int8: shared = MLMultiArray(shapedArray(of: Int8.self))
        }
        if type == natural { return shared }
        let converted = MLMultiArray(contiguousShape: shared.shapeValues, dataType: type, zeroed: false)
        shared.transfer(to: converted)
        return converted
    }
}
