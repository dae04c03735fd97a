import Foundation
import TesseraKernels

/// The implementation shared by ``MLShapedArray`` and ``MLShapedArraySlice``.
/// **Tessera-internal**: public only so that the two types can take their public members from
/// one extension. Don't conform to it or use its underscored members.
public protocol _MLShapedArrayCoreBacked: MLShapedArrayProtocol, CustomStringConvertible, Equatable, Codable
where ArrayLiteralElement == Scalar {
    /// The storage and layout.
    var _core: _ShapedArrayCore<Scalar> { get set }
    /// Wraps a core without copying.
    init(_core: _ShapedArrayCore<Scalar>)
    /// The type's name for trap messages, e.g. `MLShapedArray`.
    static var _typeName: String { get }
}

// MARK: - Creating

extension _MLShapedArrayCoreBacked {
    /// Creates an array of `shape` from scalars listed in row-major order.
    ///
    /// ```swift
    /// let m = MLShapedArray<Float>(scalars: [1, 2, 3, 4, 5, 6], shape: [2, 3])
    /// m[scalarAt: 1, 0]       // 4
    /// ```
    ///
    /// - Precondition: The sequence has exactly as many scalars as `shape` has elements, and no
    ///   dimension is negative.
    public init<S: Sequence>(scalars: S, shape: [Int]) where S.Element == Scalar {
        let op = "\(Self._typeName).init(scalars:shape:)"
        let core = _ShapedArrayCore<Scalar>(uninitializedShape: shape, op: op)
        let count = core.scalarCount
        let base = core.base
        let given =
            scalars.withContiguousStorageIfAvailable { buffer -> Int in
                if buffer.count == count, let source = buffer.baseAddress { base.update(from: source, count: count) }
                return buffer.count
            }
            ?? {
                var given = 0
                for scalar in scalars {
                    if given < count { base[given] = scalar }
                    given += 1
                }
                return given
            }()
        kernelPrecondition(
            given == count, "[\(op)] scalar count \(given) does not match shape \(shape) (\(count) scalars)")
        self.init(_core: core)
    }

    /// Creates an array of `shape` with every element set to `repeatedValue`.
    ///
    /// ```swift
    /// let zeros = MLShapedArray<Int32>(repeating: 0, shape: [2, 2])
    /// ```
    ///
    /// - Precondition: No dimension is negative.
    public init(repeating repeatedValue: Scalar, shape: [Int]) {
        let core = _ShapedArrayCore<Scalar>(
            uninitializedShape: shape, op: "\(Self._typeName).init(repeating:shape:)")
        core.base.update(repeating: repeatedValue, count: core.scalarCount)
        self.init(_core: core)
    }

    /// Creates a rank-0 array (shape `[]`) holding one scalar.
    ///
    /// ```swift
    /// let s = MLShapedArray<Float>(scalar: 3.5)
    /// s.isScalar      // true
    /// s.scalar        // 3.5
    /// ```
    public init(scalar: Scalar) {
        self.init(repeating: scalar, shape: [])
    }

    /// Creates a one-dimensional array from an array literal.
    ///
    /// ```swift
    /// let v: MLShapedArray<Float> = [1, 2, 3]      // shape [3]
    /// ```
    public init(arrayLiteral elements: Scalar...) {
        self.init(scalars: elements, shape: [elements.count])
    }

    /// Creates an `n × n` identity matrix: ones on the diagonal, zeros elsewhere.
    ///
    /// ```swift
    /// MLShapedArray<Int32>(identityMatrixOfSize: 2).scalars    // [1, 0, 0, 1]
    /// ```
    ///
    /// - Precondition: `size >= 0`.
    public init(identityMatrixOfSize size: Int) {
        kernelPrecondition(
            size >= 0, "[\(Self._typeName).init(identityMatrixOfSize:)] negative size \(size)")
        self.init(repeating: Scalar(kernelDoubleValue: 0), shape: [size, size])
        let base = _core.base
        for i in 0..<size { base[i * size + i] = Scalar(kernelDoubleValue: 1) }
    }

    /// Creates a contiguous row-major array over existing memory, without copying it.
    ///
    /// The memory is only read: the first mutation of the array (or of a copy) copies the
    /// elements into memory Tessera owns. `deallocator` runs when the last array using the
    /// memory is released; pass `.none` to keep ownership.
    ///
    /// ```swift
    /// let p = UnsafeMutablePointer<Float>.allocate(capacity: 6)
    /// p.initialize(repeating: 1, count: 6)
    /// let a = MLShapedArray<Float>(bytesNoCopy: p, shape: [2, 3], deallocator: .free)
    /// ```
    ///
    /// - Precondition: `bytes` is aligned for `Scalar` and holds `shape`'s element count.
    public init(bytesNoCopy bytes: UnsafeRawPointer, shape: [Int], deallocator: Data.Deallocator) {
        self.init(
            bytesNoCopy: bytes, shape: shape, strides: StridedLayout.contiguousStrides(for: shape),
            deallocator: deallocator)
    }

    /// Creates a strided array over existing memory, without copying it.
    ///
    /// Element `[i0, i1, …]` is read at `bytes + (i0 * strides[0] + i1 * strides[1] + …) *
    /// MemoryLayout<Scalar>.stride`. The memory is only read: the first mutation copies the
    /// elements into contiguous memory Tessera owns. `deallocator` runs when the last array
    /// using the memory is released.
    ///
    /// ```swift
    /// // A [2, 2] view of a 2 × 3 row-major buffer's first two columns.
    /// let a = MLShapedArray<Float>(bytesNoCopy: p, shape: [2, 2], strides: [3, 1], deallocator: .none)
    /// ```
    ///
    /// - Precondition: `strides` has one non-negative entry per dimension and `bytes` is
    ///   aligned for `Scalar`.
    public init(
        bytesNoCopy bytes: UnsafeRawPointer, shape: [Int], strides: [Int], deallocator: Data.Deallocator
    ) {
        let op = "\(Self._typeName).init(bytesNoCopy:shape:strides:deallocator:)"
        _ = _ShapedArrayCore<Scalar>.checkedCount(shape, op: op)
        kernelPrecondition(
            strides.count == shape.count, "[\(op)] strides \(strides) do not match the rank of shape \(shape)")
        kernelPrecondition(strides.allSatisfy { $0 >= 0 }, "[\(op)] negative stride in \(strides)")
        kernelPrecondition(
            Int(bitPattern: bytes) % MemoryLayout<Scalar>.alignment == 0,
            "[\(op)] pointer \(bytes) is not aligned for \(Scalar.self)")
        let layout = StridedLayout(shape: shape, strides: strides)
        let span = layout.elementRange.map { $0.upperBound + 1 } ?? 0
        let byteCount = span * MemoryLayout<Scalar>.stride
        UnsafeMutableRawPointer(mutating: bytes).bindMemory(to: Scalar.self, capacity: span)
        let storage = TensorStorage(adopting: bytes, byteCount: byteCount, deallocator: deallocator)
        self.init(_core: _ShapedArrayCore(storage: storage, layout: layout))
    }

    /// Creates an array of `shape` whose contiguous row-major memory `body` initializes.
    ///
    /// `body` receives a buffer of `shape`'s element count and the row-major strides; it must
    /// set every element and must not replace the buffer.
    ///
    /// ```swift
    /// let squares = MLShapedArray<Int32>(unsafeUninitializedShape: [4]) { buffer, _ in
    ///     for i in 0..<4 { buffer[i] = Int32(i * i) }
    /// }
    /// ```
    ///
    /// - Precondition: No dimension is negative; `body` leaves the buffer pointer as it found it.
    public init(
        unsafeUninitializedShape shape: [Int],
        initializingWith body: (inout UnsafeMutableBufferPointer<Scalar>, [Int]) throws -> Void
    ) rethrows {
        let op = "\(Self._typeName).init(unsafeUninitializedShape:initializingWith:)"
        let core = _ShapedArrayCore<Scalar>(uninitializedShape: shape, op: op)
        let original = UnsafeMutableBufferPointer(start: core.base, count: core.scalarCount)
        var buffer = original
        try body(&buffer, core.strides)
        kernelPrecondition(
            buffer.baseAddress == original.baseAddress && buffer.count == original.count,
            "[\(op)] the closure replaced the buffer it was given")
        self.init(_core: core)
    }

    /// Creates a contiguous row-major array from the bytes of `data` (copied).
    ///
    /// ```swift
    /// let data = [Float(1), 2, 3, 4].withUnsafeBytes { Data($0) }
    /// let m = MLShapedArray<Float>(data: data, shape: [2, 2])
    /// ```
    ///
    /// - Precondition: `data.count` is exactly `shape`'s element count times
    ///   `MemoryLayout<Scalar>.stride`.
    public init(data: Data, shape: [Int]) {
        let op = "\(Self._typeName).init(data:shape:)"
        let core = _ShapedArrayCore<Scalar>(uninitializedShape: shape, op: op)
        let byteCount = core.scalarCount * MemoryLayout<Scalar>.stride
        kernelPrecondition(
            data.count == byteCount,
            "[\(op)] data of \(data.count) bytes does not match shape \(shape) of \(Scalar.self) (\(byteCount) bytes)")
        data.withUnsafeBytes { raw in
            if let source = raw.baseAddress {
                UnsafeMutableRawPointer(core.base).copyMemory(from: source, byteCount: byteCount)
            }
        }
        self.init(_core: core)
    }

    /// Creates a strided array from the bytes of `data` (copied, strides kept).
    ///
    /// Element `[i0, i1, …]` is read at byte `(i0 * strides[0] + i1 * strides[1] + …) *
    /// MemoryLayout<Scalar>.stride` of `data`.
    ///
    /// ```swift
    /// // Column-major 2 × 3 bytes read as a [2, 3] array.
    /// let m = MLShapedArray<Float>(data: data, shape: [2, 3], strides: [1, 2])
    /// ```
    ///
    /// - Precondition: `strides` has one non-negative entry per dimension, and `data` is long
    ///   enough for the farthest element.
    public init(data: Data, shape: [Int], strides: [Int]) {
        let op = "\(Self._typeName).init(data:shape:strides:)"
        _ = _ShapedArrayCore<Scalar>.checkedCount(shape, op: op)
        kernelPrecondition(
            strides.count == shape.count, "[\(op)] strides \(strides) do not match the rank of shape \(shape)")
        kernelPrecondition(strides.allSatisfy { $0 >= 0 }, "[\(op)] negative stride in \(strides)")
        let layout = StridedLayout(shape: shape, strides: strides)
        let span = layout.elementRange.map { $0.upperBound + 1 } ?? 0
        let byteCount = span * MemoryLayout<Scalar>.stride
        kernelPrecondition(
            data.count >= byteCount,
            "[\(op)] data of \(data.count) bytes is too short for shape \(shape) with strides \(strides) "
                + "(\(byteCount) bytes of \(Scalar.self))")
        let storage = TensorStorage.allocateUnpooled(byteCount: byteCount)
        storage.pointer.bindMemory(to: Scalar.self, capacity: span)
        data.withUnsafeBytes { raw in
            if let source = raw.baseAddress, byteCount > 0 {
                storage.pointer.copyMemory(from: source, byteCount: byteCount)
            }
        }
        self.init(_core: _ShapedArrayCore(storage: storage, layout: layout))
    }

    /// Creates an array by joining arrays along an axis (`numpy.concatenate`).
    ///
    /// Every array must have the same rank and the same size on every axis but `axis`; the
    /// result's size along `axis` is the sum of theirs.
    ///
    /// ```swift
    /// let a = MLShapedArray<Float>(scalars: [1, 2], shape: [1, 2])
    /// let b = MLShapedArray<Float>(scalars: [3, 4, 5, 6], shape: [2, 2])
    /// MLShapedArray(concatenating: [a, b], alongAxis: 0).shape    // [3, 2]
    /// ```
    ///
    /// - Precondition: There is at least one array, the rank is at least 1, `axis` is in
    ///   `-rank..<rank`, and the shapes agree off the axis.
    public init<S: Sequence>(concatenating shapedArrays: S, alongAxis axis: Int) where S.Element == Self {
        let op = "\(Self._typeName).init(concatenating:alongAxis:)"
        let arrays = Array(shapedArrays)
        let (axis, shape) = CopyKernels.concatenatedShape(arrays.map(\.shape), axis: axis, op: op)
        let core = _ShapedArrayCore<Scalar>(uninitializedShape: shape, op: op)
        withExtendedLifetime(arrays) {
            CopyKernels.concatenate(
                inputs: arrays.map { (UnsafeRawPointer($0._core.storage.pointer), $0._core.layout) }, axis: axis,
                elementSize: MemoryLayout<Scalar>.stride, to: UnsafeMutableRawPointer(core.base))
        }
        self.init(_core: core)
    }
}

// MARK: - Tessera zero-copy bridge

extension _MLShapedArrayCoreBacked {
    /// The array's memory, layout and owner, without copying. **Tessera extension** for the
    /// layers above (MLTensor, MLMultiArray).
    ///
    /// `pointer` is the storage base the layout's offset and strides are measured from (in
    /// elements of `Scalar`); `owner` keeps the memory alive — retain it as long as `pointer`
    /// is used. The memory must not be written.
    package var _storage: (pointer: UnsafeRawPointer, layout: StridedLayout, owner: AnyObject) {
        (UnsafeRawPointer(_core.storage.pointer), _core.layout, _core.storage)
    }

    /// Adopts an initialized buffer read through `layout`, without copying. **Tessera
    /// extension** for the layers above (MLTensor hands its results over this way).
    ///
    /// The array becomes an owner of `buffer`; it writes into it in place while it is the only
    /// value using it, so the caller must not write to `buffer` afterwards.
    ///
    /// - Precondition: `layout`'s strides are non-negative and every element it reaches lies
    ///   inside `buffer`.
    /// Shares memory owned by `owner` (an `MLTensor`'s storage) read through `layout`, without
    /// copying. **Tessera extension** for the layers above: the array never writes the memory;
    /// its first mutation copies.
    ///
    /// - Precondition: `layout`'s strides are non-negative and every element it reaches lies
    ///   inside the `byteCount` bytes at `pointer`.
    package init(_sharing pointer: UnsafeRawPointer, byteCount: Int, owner: AnyObject, layout: StridedLayout) {
        // The name is only built when a check fails: building it costs a type-name demangling.
        func op() -> String { "\(Self._typeName).init(_sharing:byteCount:owner:layout:)" }
        kernelPrecondition(layout.strides.allSatisfy { $0 >= 0 }, "[\(op())] negative stride in \(layout)")
        if let range = layout.elementRange {
            kernelPrecondition(
                range.lowerBound >= 0 && (range.upperBound + 1) * MemoryLayout<Scalar>.stride <= byteCount,
                "[\(op())] layout \(layout) reaches outside \(byteCount) bytes")
        }
        self.init(
            _core: _ShapedArrayCore(
                storage: TensorStorage(borrowing: pointer, byteCount: byteCount, keepAlive: owner), layout: layout))
    }

    /// Adopts an initialized buffer read through `layout`, without copying. **Tessera
    /// extension** for the layers above.
    ///
    /// - Precondition: as for ``init(_sharing:byteCount:owner:layout:)``.
    package init(_adopting buffer: AlignedBuffer, layout: StridedLayout) {
        func op() -> String { "\(Self._typeName).init(_adopting:layout:)" }
        kernelPrecondition(layout.strides.allSatisfy { $0 >= 0 }, "[\(op())] negative stride in \(layout)")
        let capacity = buffer.byteCount / MemoryLayout<Scalar>.stride
        if let range = layout.elementRange {
            kernelPrecondition(
                range.lowerBound >= 0 && range.upperBound < capacity,
                "[\(op())] layout \(layout) reaches elements \(range) outside a buffer of \(capacity) \(Scalar.self)")
        }
        buffer.pointer.bindMemory(to: Scalar.self, capacity: capacity)
        self.init(_core: _ShapedArrayCore(storage: TensorStorage(buffer: buffer), layout: layout))
    }
}
