import Foundation
import TesseraGraph
import TesseraKernels

/// A machine learning collection type that stores scalar values in a multidimensional array.
///
/// Elements are stored row-major (first-major) and contiguously. `MLShapedArray` is a value
/// type with copy-on-write: copies share storage until one of them is mutated. Converting to
/// and from `MLTensor` shares the storage too, so neither direction copies when the layout
/// and type already match.
///
/// ```swift
/// var a = MLShapedArray<Float>(scalars: [1, 2, 3, 4, 5, 6], shape: [2, 3])
/// a[scalarAt: 1, 2] = 60
/// print(a.scalars)        // [1.0, 2.0, 3.0, 4.0, 5.0, 60.0]
/// print(a[1].scalars)     // [4.0, 5.0, 60.0]
/// ```
public struct MLShapedArray<Scalar: MLShapedArrayScalar>: MLShapedArrayProtocol, @unchecked Sendable {
    package var storage: TensorStorage
    /// The size of each dimension.
    public private(set) var shape: [Int]
    /// Where element `[0, 0, …]` sits in `storage`, in elements.
    package private(set) var offset: Int

    /// Wraps storage without copying.
    package init(storage: TensorStorage, shape: [Int], offset: Int = 0) {
        let count = shape.reduce(1, *)
        kernelPrecondition(
            (offset + count) * MemoryLayout<Scalar>.stride <= storage.byteCount,
            "[MLShapedArray] shape \(shape) at offset \(offset) reaches past its storage")
        self.storage = storage
        self.shape = shape
        self.offset = offset
    }

    /// Creates an array of `shape` with uninitialized storage that `body` fills.
    package init(uninitializedShape shape: [Int], _ body: (UnsafeMutablePointer<Scalar>, Int) throws -> Void) rethrows {
        kernelPrecondition(shape.allSatisfy { $0 >= 0 }, "[MLShapedArray] negative dimension in shape \(shape)")
        let count = shape.reduce(1, *)
        let storage = TensorStorage.allocate(count: count, type: Scalar.kernelScalarType)
        try body(storage.pointer.bindMemory(to: Scalar.self, capacity: count), count)
        self.init(storage: storage, shape: shape)
    }

    /// Creates an array of `shape` from scalars in row-major order.
    ///
    /// - Precondition: the number of scalars equals the product of `shape`.
    public init<S: Sequence>(scalars: S, shape: [Int]) where S.Element == Scalar {
        let values = Array(scalars)
        kernelPrecondition(
            values.count == shape.reduce(1, *),
            "[MLShapedArray] \(values.count) scalars do not fill shape \(shape) (\(shape.reduce(1, *)) needed)")
        self.init(uninitializedShape: shape) { pointer, count in
            values.withUnsafeBufferPointer { pointer.initialize(from: $0.baseAddress!, count: count) }
        }
    }

    /// Creates an array of `shape` with every scalar equal to `value`.
    public init(repeating value: Scalar, shape: [Int]) {
        self.init(uninitializedShape: shape) { pointer, count in pointer.initialize(repeating: value, count: count) }
    }

    /// Creates a rank-0 array holding `scalar`.
    public init(scalar: Scalar) {
        self.init(scalars: [scalar], shape: [])
    }

    /// Creates a one-dimensional array from a literal: `let a: MLShapedArray<Float> = [1, 2, 3]`.
    public init(arrayLiteral elements: Scalar...) {
        self.init(scalars: elements, shape: [elements.count])
    }

    /// Creates an array of `shape` by copying row-major bytes from `data`.
    ///
    /// - Precondition: `data` holds exactly the scalars of `shape`.
    public init(data: Data, shape: [Int]) {
        self.init(data: data, shape: shape, strides: StridedLayout.contiguousStrides(for: shape))
    }

    /// Creates an array of `shape` by copying elements laid out with `strides` (in elements)
    /// from `data`.
    ///
    /// - Precondition: every element position lies inside `data`.
    public init(data: Data, shape: [Int], strides: [Int]) {
        let layout = StridedLayout(shape: shape, strides: strides)
        let needed = ((layout.elementRange?.upperBound ?? -1) + 1) * MemoryLayout<Scalar>.stride
        kernelPrecondition(
            (layout.elementRange?.lowerBound ?? 0) >= 0 && data.count >= needed,
            "[MLShapedArray] \(data.count) bytes cannot hold shape \(shape) with strides \(strides)")
        self.init(uninitializedShape: shape) { pointer, count in
            guard count > 0 else { return }
            data.withUnsafeBytes { bytes in
                CopyKernels.copy(
                    from: bytes.baseAddress!, layout: layout, elementSize: MemoryLayout<Scalar>.stride, to: pointer)
            }
        }
    }

    /// Creates an array over `bytesNoCopy` (row-major), calling `deallocator` when the memory
    /// is no longer used.
    public init(bytesNoCopy bytes: UnsafeRawPointer, shape: [Int], deallocator: Data.Deallocator) {
        let count = shape.reduce(1, *)
        let release = ShapedArrayDeallocator(deallocator, pointer: UnsafeMutableRawPointer(mutating: bytes), count: count * MemoryLayout<Scalar>.stride)
        let storage = TensorStorage(
            adopting: UnsafeMutableRawPointer(mutating: bytes), byteCount: count * MemoryLayout<Scalar>.stride,
            release: { release.run() })
        self.init(storage: storage, shape: shape)
    }

    /// Creates an array from elements at `bytesNoCopy` laid out with `strides`; row-major
    /// strides are adopted without a copy, others are copied once (and `deallocator` runs
    /// right away).
    public init(bytesNoCopy bytes: UnsafeRawPointer, shape: [Int], strides: [Int], deallocator: Data.Deallocator) {
        if strides == StridedLayout.contiguousStrides(for: shape) {
            self.init(bytesNoCopy: bytes, shape: shape, deallocator: deallocator)
            return
        }
        let layout = StridedLayout(shape: shape, strides: strides)
        kernelPrecondition(
            (layout.elementRange?.lowerBound ?? 0) >= 0, "[MLShapedArray] negative element positions for strides \(strides)")
        self.init(uninitializedShape: shape) { pointer, count in
            if count > 0 {
                CopyKernels.copy(from: bytes, layout: layout, elementSize: MemoryLayout<Scalar>.stride, to: pointer)
            }
        }
        let byteCount = ((layout.elementRange?.upperBound ?? -1) + 1) * MemoryLayout<Scalar>.stride
        ShapedArrayDeallocator(deallocator, pointer: UnsafeMutableRawPointer(mutating: bytes), count: byteCount).run()
    }

    /// Creates an array of `shape` whose row-major storage `initializer` fills; it also gets
    /// the strides.
    public init(
        unsafeUninitializedShape shape: [Int],
        initializingWith initializer: (inout UnsafeMutableBufferPointer<Scalar>, [Int]) throws -> Void
    ) rethrows {
        try self.init(uninitializedShape: shape) { pointer, count in
            var buffer = UnsafeMutableBufferPointer(start: pointer, count: count)
            try initializer(&buffer, StridedLayout.contiguousStrides(for: shape))
        }
    }

    /// Creates an array by joining arrays along an axis.
    ///
    /// - Precondition: the arrays have one rank and agree off `axis`.
    public init<S: Sequence>(concatenating arrays: S, alongAxis axis: Int) where S.Element == MLShapedArray<Scalar> {
        let parts = Array(arrays)
        kernelPrecondition(!parts.isEmpty, "[MLShapedArray] concatenating needs at least one array")
        let rank = parts[0].shape.count
        let axis = axis < 0 ? axis + rank : axis
        kernelPrecondition(axis >= 0 && axis < rank, "[MLShapedArray] axis out of range for shape \(parts[0].shape)")
        var shape = parts[0].shape
        shape[axis] = 0
        for part in parts {
            var other = part.shape
            kernelPrecondition(other.count == rank, "[MLShapedArray] ranks differ: \(part.shape) vs \(parts[0].shape)")
            let size = other[axis]
            other[axis] = 0
            var base = parts[0].shape
            base[axis] = 0
            kernelPrecondition(other == base, "[MLShapedArray] shapes differ off axis \(axis): \(part.shape) vs \(parts[0].shape)")
            shape[axis] += size
        }
        self.init(uninitializedShape: shape) { pointer, count in
            guard count > 0 else { return }
            CopyKernels.concatenate(
                inputs: parts.map { ($0._tensorValue.pointer, $0._tensorValue.layout) }, axis: axis,
                elementSize: MemoryLayout<Scalar>.stride, to: pointer)
        }
    }

    /// Row-major strides for ``shape``.
    public var strides: [Int] { StridedLayout.contiguousStrides(for: shape) }

    /// The number of scalars.
    public var scalarCount: Int { shape.reduce(1, *) }

    /// **Tessera internal.** The elements as a kernel-layer value over the same storage.
    public var _tensorValue: TensorValue {
        TensorValue(
            storage: storage, layout: StridedLayout(shape: shape, strides: strides, offset: offset),
            type: Scalar.kernelScalarType)
    }

    /// The first scalar's address (read-only use).
    package var base: UnsafeMutablePointer<Scalar> {
        storage.pointer.assumingMemoryBound(to: Scalar.self) + offset
    }

    /// Makes the storage unique before a write (copy on write).
    package mutating func makeUnique() {
        if isKnownUniquelyReferenced(&storage) { return }
        let count = scalarCount
        let copy = TensorStorage.allocate(count: count, type: Scalar.kernelScalarType)
        copy.pointer.copyMemory(from: base, byteCount: count * MemoryLayout<Scalar>.stride)
        storage = copy
        offset = 0
    }

    /// The scalars in row-major order.
    public var scalars: [Scalar] {
        get { Array(UnsafeBufferPointer(start: base, count: scalarCount)) }
        set {
            kernelPrecondition(
                newValue.count == scalarCount,
                "[MLShapedArray] \(newValue.count) scalars do not fill shape \(shape)")
            makeUnique()
            newValue.withUnsafeBufferPointer { base.update(from: $0.baseAddress!, count: newValue.count) }
        }
    }

    /// The value of a rank-0 array, or `nil` for any other rank; setting it on a rank-0
    /// array stores the value.
    public var scalar: Scalar? {
        get { shape.isEmpty ? base.pointee : nil }
        set {
            guard shape.isEmpty, let newValue else { return }
            makeUnique()
            base.pointee = newValue
        }
    }

    /// Calls `body` with the scalars, the shape and the strides.
    public func withUnsafeShapedBufferPointer<R>(
        _ body: (UnsafeBufferPointer<Scalar>, [Int], [Int]) throws -> R
    ) rethrows -> R {
        try withExtendedLifetime(storage) {
            try body(UnsafeBufferPointer(start: base, count: scalarCount), shape, strides)
        }
    }

    /// Calls `body` with mutable access to the scalars, the shape and the strides.
    public mutating func withUnsafeMutableShapedBufferPointer<R>(
        _ body: (inout UnsafeMutableBufferPointer<Scalar>, [Int], [Int]) throws -> R
    ) rethrows -> R {
        makeUnique()
        var buffer = UnsafeMutableBufferPointer(start: base, count: scalarCount)
        return try withExtendedLifetime(storage) { try body(&buffer, shape, strides) }
    }

    /// Sets every scalar to `value`.
    public mutating func fill(with value: Scalar) {
        makeUnique()
        base.update(repeating: value, count: scalarCount)
    }

    /// The row-major position of a full index; traps when it is out of bounds.
    private func position<C: Collection>(_ indices: C) -> Int where C.Element == Int {
        kernelPrecondition(
            indices.count == shape.count, "[MLShapedArray] index \(Array(indices)) does not match shape \(shape)")
        var position = 0
        for (axis, index) in indices.enumerated() {
            kernelPrecondition(
                index >= 0 && index < shape[axis], "[MLShapedArray] index \(Array(indices)) is out of bounds for shape \(shape)")
            position = position * shape[axis] + index
        }
        return position
    }

    /// The scalar at a full index.
    public subscript<C: Collection>(scalarAt indices: C) -> Scalar where C.Element == Int {
        get { base[position(indices)] }
        set {
            let p = position(indices)
            makeUnique()
            base[p] = newValue
        }
    }

    /// The scalar at a full index, variadic form: `a[scalarAt: 1, 2]`.
    public subscript(scalarAt indices: Int...) -> Scalar {
        get { self[scalarAt: indices] }
        set { self[scalarAt: indices] = newValue }
    }

    /// The sub-array at leading indices (rank = rank − indices.count).
    public subscript<C: Collection>(indices indices: C) -> MLShapedArraySlice<Scalar> where C.Element == Int {
        get {
            kernelPrecondition(indices.count <= shape.count, "[MLShapedArray] too many indices \(Array(indices)) for shape \(shape)")
            var start = 0
            for (axis, index) in indices.enumerated() {
                kernelPrecondition(
                    index >= 0 && index < shape[axis], "[MLShapedArray] index \(Array(indices)) is out of bounds for shape \(shape)")
                start += index * strides[axis]
            }
            return MLShapedArraySlice(
                array: MLShapedArray(storage: storage, shape: Array(shape.dropFirst(indices.count)), offset: offset + start))
        }
        set {
            let target = self[indices: indices]
            kernelPrecondition(
                newValue.shape == target.shape, "[MLShapedArray] slice of shape \(newValue.shape) does not fit \(target.shape)")
            let start = target.array.offset - offset
            makeUnique()
            newValue.array.withUnsafeShapedBufferPointer { source, _, _ in
                (base + start).update(from: source.baseAddress!, count: source.count)
            }
        }
    }

    /// Returns the same scalars with a new shape.
    public func reshaped(to newShape: [Int]) -> MLShapedArray<Scalar> {
        kernelPrecondition(
            newShape.reduce(1, *) == scalarCount, "[MLShapedArray] cannot reshape \(shape) to \(newShape)")
        return MLShapedArray(storage: storage, shape: newShape, offset: offset)
    }

    /// Returns the array with a size-1 dimension inserted at `axis`.
    public func expandingShape(at axis: Int) -> MLShapedArray<Scalar> {
        let axis = axis < 0 ? axis + shape.count + 1 : axis
        kernelPrecondition(axis >= 0 && axis <= shape.count, "[MLShapedArray] axis \(axis) out of range for \(shape)")
        var newShape = shape
        newShape.insert(1, at: axis)
        return reshaped(to: newShape)
    }

    /// Returns the array without its size-1 dimensions.
    public func squeezingShape() -> MLShapedArray<Scalar> {
        reshaped(to: shape.filter { $0 != 1 })
    }

    /// Returns the array with its dimensions reversed.
    public func transposed() -> MLShapedArray<Scalar> {
        transposed(permutation: Array((0..<shape.count).reversed()))
    }

    /// Returns the array with its dimensions reordered: result axis `i` is axis `permutation[i]`.
    public func transposed(permutation: [Int]) -> MLShapedArray<Scalar> {
        let layout = _tensorValue.layout.permuted(permutation)
        return MLShapedArray(uninitializedShape: layout.shape) { pointer, count in
            if count > 0 {
                CopyKernels.copy(from: storage.pointer, layout: layout, elementSize: MemoryLayout<Scalar>.stride, to: pointer)
            }
        }
    }

    // MARK: Collection (slices along the first axis)

    public var startIndex: Int { 0 }
    public var endIndex: Int { shape.first ?? 0 }

    /// The slice at `index` along the first axis.
    public subscript(index: Int) -> MLShapedArraySlice<Scalar> {
        get { self[indices: [index]] }
        set { self[indices: [index]] = newValue }
    }
}

extension MLShapedArray: Equatable {
    /// Arrays are equal when their shapes and scalars are.
    public static func == (lhs: MLShapedArray, rhs: MLShapedArray) -> Bool {
        guard lhs.shape == rhs.shape else { return false }
        for i in 0..<lhs.scalarCount where lhs.base[i].kernelDoubleValue != rhs.base[i].kernelDoubleValue {
            if lhs.base[i].kernelDoubleValue.isNaN && rhs.base[i].kernelDoubleValue.isNaN { continue }
            return false
        }
        return true
    }
}

extension MLShapedArray: Codable where Scalar: Codable {
    private enum CodingKeys: String, CodingKey { case shape, scalars }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let shape = try container.decode([Int].self, forKey: .shape)
        let scalars = try container.decode([Scalar].self, forKey: .scalars)
        guard shape.allSatisfy({ $0 >= 0 }), scalars.count == shape.reduce(1, *) else {
            throw DecodingError.dataCorruptedError(
                forKey: .scalars, in: container,
                debugDescription: "\(scalars.count) scalars do not fill shape \(shape)")
        }
        self.init(scalars: scalars, shape: shape)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(shape, forKey: .shape)
        try container.encode(scalars, forKey: .scalars)
    }
}

extension MLShapedArray: CustomStringConvertible {
    /// Nested brackets in row-major order, like NumPy: `[[1.0, 2.0], [3.0, 4.0]]`.
    public var description: String {
        let values = scalars
        func render(_ axis: Int, _ start: Int) -> String {
            if axis == shape.count { return "\(values[start])" }
            let stride = shape[(axis + 1)...].reduce(1, *)
            return "[" + (0..<shape[axis]).map { render(axis + 1, start + $0 * stride) }.joined(separator: ", ") + "]"
        }
        return scalarCount == 0 ? "[]" : render(0, 0)
    }
}

/// Runs a `Data.Deallocator` once.
final class ShapedArrayDeallocator: @unchecked Sendable {
    private let deallocator: Data.Deallocator
    private let pointer: UnsafeMutableRawPointer
    private let count: Int

    init(_ deallocator: Data.Deallocator, pointer: UnsafeMutableRawPointer, count: Int) {
        self.deallocator = deallocator
        self.pointer = pointer
        self.count = count
    }

    func run() {
        switch deallocator {
        case .free: free(pointer)
        case .none: break
        case let .custom(body): body(pointer, count)
        case .unmap: munmap(pointer, count)
        @unknown default: break
        }
    }
}
