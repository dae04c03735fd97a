import TesseraGraph
import TesseraKernels

extension MLTensor {
    /// Creates a tensor from a shaped array or slice, sharing its storage (no copy).
    ///
    /// The array is a value type with copy-on-write, so later changes to it do not reach the
    /// tensor.
    public init<ShapedArray: MLShapedArrayProtocol>(_ shapedArray: ShapedArray)
    where ShapedArray.Scalar: MLTensorScalar {
        self.init(value: shapedArray._tensorValue)
    }

    /// Computes the tensor and returns its elements as a shaped array.
    ///
    /// The work runs on a Dispatch worker, never blocking a thread of Swift's cooperative
    /// pool. When the result is already contiguous and of type `Scalar`, the array shares its
    /// storage with the tensor (no copy); otherwise the elements are gathered and converted
    /// once.
    ///
    /// ```swift
    /// let p = await logits.softmax().shapedArray(of: Float.self)
    /// ```
    public func shapedArray<Scalar>(of scalarType: Scalar.Type) async -> MLShapedArray<Scalar>
    where Scalar: MLShapedArrayScalar, Scalar: MLTensorScalar {
        await materialized()
        return makeShapedArray(Scalar.self)
    }

    /// **Tessera extension.** The synchronous overload of ``shapedArray(of:)-(Scalar.Type)``:
    /// Swift picks it in synchronous code; it blocks the calling thread while the tensor is
    /// computed.
    public func shapedArray<Scalar>(of scalarType: Scalar.Type) -> MLShapedArray<Scalar>
    where Scalar: MLShapedArrayScalar, Scalar: MLTensorScalar {
        materialized()
        return makeShapedArray(Scalar.self)
    }

    private func makeShapedArray<Scalar: MLShapedArrayScalar & MLTensorScalar>(_: Scalar.Type) -> MLShapedArray<Scalar> {
        let value = node.value!
        if value.type == Scalar.kernelScalarType && value.layout.isContiguous && value.layout.offset >= 0 {
            return MLShapedArray(storage: value.storage, shape: shape, offset: value.layout.offset)
        }
        return MLShapedArray(uninitializedShape: shape) { pointer, count in
            if count > 0 {
                ElementwiseKernels.cast(
                    input: value.pointer, layout: value.layout, from: value.type, output: pointer,
                    to: Scalar.kernelScalarType)
            }
        }
    }
}
