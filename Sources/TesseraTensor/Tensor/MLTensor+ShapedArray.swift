import TesseraGraph
import TesseraKernels

extension MLTensor {
    /// Creates a tensor from a shaped array or slice, sharing its memory (no copy), whatever
    /// its strides.
    ///
    /// The array is a value type with copy-on-write, so later changes to it do not reach the
    /// tensor.
    public init<ShapedArray: MLShapedArrayProtocol>(_ shapedArray: ShapedArray)
    where ShapedArray.Scalar: MLTensorScalar {
        if let backed = shapedArray as? any _MLShapedArrayCoreBacked {
            let (pointer, layout, owner) = MLTensor.storage(of: backed)
            let byteCount =
                ((layout.elementRange?.upperBound ?? -1) + 1) * ShapedArray.Scalar.kernelScalarType.byteCount
            let storage = TensorStorage(borrowing: pointer, byteCount: byteCount, keepAlive: owner)
            self.init(value: TensorValue(storage: storage, layout: layout, type: ShapedArray.Scalar.kernelScalarType))
        } else {
            self.init(shape: shapedArray.shape, scalars: shapedArray.scalars, scalarType: ShapedArray.Scalar.self)
        }
    }

    private static func storage(of array: some _MLShapedArrayCoreBacked) -> (UnsafeRawPointer, StridedLayout, AnyObject)
    {
        array._storage
    }

    /// Computes the tensor and returns its elements as a shaped array.
    ///
    /// The work runs on the calling task's thread, as bounded CPU work that never waits for
    /// another task, so awaiting costs no more than the blocking form (see
    /// `Docs/LazyEvaluation.md`); large loops split across Tessera's kernel threads with this
    /// thread taking part. Called from the main actor, the call hops to the cooperative pool
    /// and back, as every nonisolated `async` function does. When the result's strides are non-negative and its type is `Scalar`, the array
    /// shares the tensor's memory (no copy, whatever the layout); otherwise the elements are
    /// gathered and converted once.
    ///
    /// ```swift
    /// let p = await logits.softmax().shapedArray(of: Float.self)
    /// ```
    public func shapedArray<Scalar>(of scalarType: Scalar.Type) async -> MLShapedArray<Scalar>
    where Scalar: MLShapedArrayScalar, Scalar: MLTensorScalar {
        await materialized()
        return makeShapedArray(Scalar.self)
    }

    /// **Tessera extension.** The synchronous overload of `shapedArray(of:)`: Swift picks it
    /// in synchronous code; it blocks the calling thread while the tensor is computed.
    public func shapedArray<Scalar>(of scalarType: Scalar.Type) -> MLShapedArray<Scalar>
    where Scalar: MLShapedArrayScalar, Scalar: MLTensorScalar {
        materialized()
        return makeShapedArray(Scalar.self)
    }

    private func makeShapedArray<Scalar: MLShapedArrayScalar & MLTensorScalar>(_: Scalar.Type) -> MLShapedArray<Scalar>
    {
        // An inline tensor makes its node on each `node` read: read it once.
        if let storedNode { BuildReads.note(reading: storedNode) }
        let value = node.value!
        if value.type == Scalar.kernelScalarType && value.layout.strides.allSatisfy({ $0 >= 0 })
            && (value.layout.elementRange?.lowerBound ?? 0) >= 0
        {
            return MLShapedArray(
                _sharing: value.pointer, byteCount: value.storage.byteCount, owner: value.storage, layout: value.layout)
        }
        return MLShapedArray(unsafeUninitializedShape: shape) { buffer, _ in
            if let base = buffer.baseAddress, buffer.count > 0 {
                ElementwiseKernels.cast(
                    input: value.pointer, layout: value.layout, from: value.type, output: base,
                    to: Scalar.kernelScalarType)
            }
        }
    }
}
