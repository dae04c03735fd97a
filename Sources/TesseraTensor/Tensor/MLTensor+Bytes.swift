import Foundation
import TesseraGraph
import TesseraKernels

extension MLTensor {
    /// Creates a tensor of `shape` by copying `data`, read as contiguous row-major elements of
    /// `scalarType`.
    ///
    /// - Precondition: `data` holds at least `shape.reduce(1, *)` elements.
    public init(shape: [Int], data: Data, scalarType: any MLTensorScalar.Type) {
        let type = scalarType.kernelScalarType
        let needed = shape.reduce(1, *) * type.byteCount
        kernelPrecondition(
            data.count >= needed,
            "[MLTensor] \(data.count) bytes of data cannot fill shape \(shape) of \(type) (\(needed) bytes needed)")
        self.init(shape: shape, kernelType: type) { pointer, _ in
            data.withUnsafeBytes { bytes in
                if needed > 0 { pointer.copyMemory(from: bytes.baseAddress!, byteCount: needed) }
            }
        }
    }

    /// Creates a tensor over `bytes` without copying; `deallocator` runs when the last tensor
    /// using the memory is gone.
    ///
    /// The bytes are read as contiguous row-major elements of `scalarType`, and must not be
    /// changed while a tensor uses them.
    ///
    /// - Precondition: `bytes` holds at least `shape.reduce(1, *)` elements and is aligned for
    ///   `scalarType`.
    public init(
        bytesNoCopy bytes: UnsafeRawBufferPointer, shape: [Int], scalarType: any MLTensorScalar.Type,
        deallocator: Data.Deallocator
    ) {
        let type = scalarType.kernelScalarType
        let needed = shape.reduce(1, *) * type.byteCount
        kernelPrecondition(
            bytes.count >= needed,
            "[MLTensor] \(bytes.count) bytes cannot hold shape \(shape) of \(type) (\(needed) bytes needed)")
        let base = bytes.baseAddress.map { UnsafeMutableRawPointer(mutating: $0) }
        kernelPrecondition(
            needed == 0 || Int(bitPattern: base) % type.byteCount == 0,
            "[MLTensor] bytesNoCopy: pointer is not aligned for \(type)")
        // An empty buffer has no base address and nothing to release.
        let storage =
            base.map { TensorStorage(adopting: $0, byteCount: bytes.count, deallocator: deallocator) }
            ?? TensorStorage(adopting: UnsafeRawPointer(bitPattern: 64)!, byteCount: 0, release: nil)
        self.init(value: TensorValue(storage: storage, layout: StridedLayout(contiguous: shape), type: type))
    }

    /// Creates a tensor of `shape` whose contiguous row-major storage `initializer` fills.
    ///
    /// ```swift
    /// let t = MLTensor(unsafeUninitializedShape: [4], scalarType: Float.self) { buffer in
    ///     let floats = buffer.bindMemory(to: Float.self)
    ///     for i in floats.indices { floats[i] = Float(i) }
    /// }
    /// ```
    public init(
        unsafeUninitializedShape shape: [Int], scalarType: any MLTensorScalar.Type,
        initializingWith initializer: (UnsafeMutableRawBufferPointer) throws -> Void
    ) rethrows {
        let type = scalarType.kernelScalarType
        try self.init(shape: shape, kernelType: type) { pointer, count in
            try initializer(UnsafeMutableRawBufferPointer(start: pointer, count: count * type.byteCount))
        }
    }
}
