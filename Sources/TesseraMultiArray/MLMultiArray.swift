import Foundation
import TesseraKernels
import TesseraTensor

/// A multidimensional array of numbers with a run-time data type and explicit strides: Core
/// ML's `MLMultiArray`, the type model inputs and outputs travel in.
///
/// An array has a ``shape`` (dimension sizes), ``strides`` (the distance in elements between
/// neighbours along each dimension, so element `[i, j, k]` sits at linear offset
/// `i * strides[0] + j * strides[1] + k * strides[2]` from ``dataPointer``) and a
/// ``dataType`` (`.float32`, `.float16`, `.double`, `.int32`, `.int8`). Arrays Tessera
/// allocates are contiguous and row-major; arrays wrapping memory
/// (``init(dataPointer:shape:dataType:strides:deallocator:)``) or with explicit strides
/// (``init(shape:dataType:strides:)``) may be padded.
///
/// ```swift
/// let input = try MLMultiArray(shape: [1, 3, 224, 224], dataType: .float32)
/// input[[0, 1, 10, 20] as [NSNumber]] = 0.5          // compatible, but slow per element
/// input.withUnsafeMutableBufferPointer(ofType: Float.self) { buffer, strides in
///     buffer[1 * strides[1] + 10 * strides[2] + 20 * strides[3]] = 0.5   // the fast route
/// }
/// let typed = MLShapedArray<Float>(input)              // no copy
/// let tensor = MLTensor(input)                         // no copy (Tessera extension)
/// ```
///
/// ## Fast element access
///
/// The `NSNumber` subscripts exist for source compatibility; each access boxes a number. Loops
/// over many elements should use ``withUnsafeBufferPointer(ofType:_:)`` /
/// ``withUnsafeMutableBufferPointer(ofType:_:)`` (typed memory plus strides) or convert to an
/// `MLShapedArray` or `MLTensor`: Docs/Performance.md has the figures (the typed loop is 60–200×
/// faster).
///
/// ## Sharing and copies
///
/// `MLShapedArray(multiArray)`, `MLTensor(multiArray)` and `MLMultiArray(shapedArray)` share
/// memory instead of copying when the data type matches. Shaped arrays and tensors are values,
/// so the multi-array keeps them unchanged: before a write (a subscript setter,
/// `withUnsafeMutable…`, ``transfer(to:)`` into it, or reading ``dataPointer``) an array whose
/// memory is shared moves to its own copy with the same strides. Two exceptions are the
/// caller's to manage: memory passed to `init(dataPointer:…)` is always written in place (it is
/// the caller's), and writes through a `dataPointer` fetched *before* the memory was shared
/// reach the sharers.
///
/// ## Threads
///
/// As on Apple platforms, a multi-array is not safe to mutate from several threads at once,
/// and it is not `Sendable`. Convert to `MLShapedArray` (a `Sendable` value, no copy) to hand
/// data to another task.
///
/// Identity semantics: `==` and `hash(into:)` compare objects, as `NSObject`'s do.
public final class MLMultiArray {
    /// The memory; replaced by a copy before a write while others share it.
    var storage: TensorStorage
    /// The dimension sizes as integers: ``shape`` without making an `NSNumber` per dimension
    /// (on Linux each costs about as much as a small allocation; a prediction's checks read the
    /// shape several times).
    package let shapeValues: [Int]
    /// The element strides as integers (``strides`` without the `NSNumber`s).
    package let strideValues: [Int]
    /// The element type.
    public let dataType: MLMultiArrayDataType
    /// The elements from `[0, 0, …]` to the farthest, inclusive.
    let span: Int

    /// Wraps checked storage and layout.
    init(storage: TensorStorage, shape: [Int], strides: [Int], dataType: MLMultiArrayDataType, span: Int) {
        self.storage = storage
        self.shapeValues = shape
        self.strideValues = strides
        self.dataType = dataType
        self.span = span
    }

    /// Fresh owned, contiguous row-major memory for `shape` (the shape already checked).
    convenience init(contiguousShape shape: [Int], dataType: MLMultiArrayDataType, zeroed: Bool) {
        let count = shape.reduce(1, *)
        let storage = TensorStorage.allocateUnpooled(byteCount: count * dataType.byteCount, zeroed: zeroed)
        dataType.bind(storage.pointer, count: count)
        self.init(
            storage: storage, shape: shape, strides: StridedLayout.contiguousStrides(for: shape), dataType: dataType,
            span: count)
    }

    /// The total number of elements: the product of ``shape``.
    ///
    /// ```swift
    /// try MLMultiArray(shape: [2, 3], dataType: .int32).count     // 6
    /// ```
    public var count: Int { shapeValues.reduce(1, *) }

    /// The size of each dimension.
    public var shape: [NSNumber] { shapeValues.map { NSNumber(value: $0) } }

    /// The distance in elements between neighbours along each dimension; element
    /// `[i0, i1, …]` is at linear offset `i0 * strides[0] + i1 * strides[1] + …`.
    ///
    /// ```swift
    /// try MLMultiArray(shape: [2, 3, 4], dataType: .float32).strides     // [12, 4, 1]
    /// ```
    public var strides: [NSNumber] { strideValues.map { NSNumber(value: $0) } }

    /// The address of element `[0, 0, …]`; elements are at the offsets ``strides`` give, in
    /// units of the ``dataType``'s size.
    ///
    /// Tessera treats reading this property as the start of a write: if a shaped array or
    /// tensor shares the memory, the array first moves to its own copy (same strides), so the
    /// pointer may differ from the one a previous read returned. Prefer the scoped
    /// `withUnsafe…` methods.
    public var dataPointer: UnsafeMutableRawPointer {
        prepareForWriting()
        return storage.pointer
    }

    /// The layout in kernel terms (offset 0 from the storage's pointer).
    var layout: StridedLayout { StridedLayout(shape: shapeValues, strides: strideValues) }

    /// Whether the elements are contiguous and row-major.
    var isContiguous: Bool { layout.isContiguous }

    /// Moves to an owned copy unless the memory may be written in place: the caller's wrapped
    /// memory always may; owned memory may while nothing else shares it; borrowed never.
    func prepareForWriting() {
        if storage.isWrapped { return }
        if storage.isOwned && isKnownUniquelyReferenced(&storage) { return }
        storage = storage.ownedCopy()
        dataType.bind(storage.pointer, count: span)
    }

    /// The base pointer as seen by readers (no copy).
    var readPointer: UnsafeRawPointer { UnsafeRawPointer(storage.pointer) }
}

extension MLMultiArray: Hashable {
    /// Whether `lhs` and `rhs` are the same object (`NSObject` identity, as on Apple platforms).
    public static func == (lhs: MLMultiArray, rhs: MLMultiArray) -> Bool { lhs === rhs }

    /// Hashes the object's identity.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
