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
        guard
            MLTensor.check(
                data.count >= needed,
                "[MLTensor] \(data.count) bytes of data cannot fill shape \(shape) of \(type) (\(needed) bytes needed)")
        else {
            self = .placeholder(shape: shape, type: type)
            return
        }
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
        let base = bytes.baseAddress.map { UnsafeMutableRawPointer(mutating: $0) }
        let count = bytes.count
        let release = DeallocatorBox(deallocator, pointer: base, count: count)
        // Inside `withShapeChecks` a rejected buffer is released at once: the tensor owned it.
        guard
            MLTensor.check(
                shape.allSatisfy { $0 >= 0 } && bytes.count >= needed,
                "[MLTensor] \(bytes.count) bytes cannot hold shape \(shape) of \(type) (\(needed) bytes needed)"),
            MLTensor.check(
                needed == 0 || Int(bitPattern: base) % type.byteCount == 0,
                "[MLTensor] bytesNoCopy: pointer is not aligned for \(type)")
        else {
            release.run()
            self = .placeholder(shape: shape, type: type)
            return
        }
        let storage = TensorStorage(
            adopting: base ?? UnsafeMutableRawPointer(bitPattern: 64)!, byteCount: count,
            release: { release.run() })
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

/// Runs a `Data.Deallocator` once, from whichever thread frees the storage.
private final class DeallocatorBox: @unchecked Sendable {
    private let deallocator: Data.Deallocator
    private let pointer: UnsafeMutableRawPointer?
    private let count: Int

    init(_ deallocator: Data.Deallocator, pointer: UnsafeMutableRawPointer?, count: Int) {
        self.deallocator = deallocator
        self.pointer = pointer
        self.count = count
    }

    /// Hands the memory to a `Data` and drops it, which runs the deallocator exactly the way
    /// Foundation defines each case.
    func run() {
        guard let pointer else { return }
        _ = Data(bytesNoCopy: pointer, count: count, deallocator: deallocator)
    }
}
