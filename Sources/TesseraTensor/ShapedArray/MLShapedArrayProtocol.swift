import Foundation

/// The interface shared by ``MLShapedArray`` and ``MLShapedArraySlice``: a multidimensional
/// array of scalars that is also a collection of its slices along the first axis.
///
/// Shapes are `[Int]` lists of dimension sizes (`[]` for a single scalar); strides are in
/// elements. Scalars are listed in row-major ("first-major", C) order.
///
/// ```swift
/// func total<A: MLShapedArrayProtocol>(_ a: A) -> Float where A.Scalar == Float {
///     a.scalars.reduce(0, +)
/// }
/// ```
public protocol MLShapedArrayProtocol<Scalar>: ExpressibleByArrayLiteral, MutableCollection, RandomAccessCollection
where Index == Int {
    /// The element type.
    associatedtype Scalar: MLShapedArrayScalar

    /// Creates an array of `shape` from scalars in row-major order.
    init<S: Sequence>(scalars: S, shape: [Int]) where S.Element == Scalar
    /// Creates an array of `shape` with every element `repeatedValue`.
    init(repeating repeatedValue: Scalar, shape: [Int])
    /// Creates a contiguous row-major array over existing memory without copying it.
    init(bytesNoCopy bytes: UnsafeRawPointer, shape: [Int], deallocator: Data.Deallocator)
    /// Creates a strided array over existing memory without copying it.
    init(bytesNoCopy bytes: UnsafeRawPointer, shape: [Int], strides: [Int], deallocator: Data.Deallocator)
    /// Creates an array whose memory `body` initializes.
    init(
        unsafeUninitializedShape shape: [Int],
        initializingWith body: (inout UnsafeMutableBufferPointer<Scalar>, [Int]) throws -> Void
    ) rethrows

    /// The size of each dimension.
    var shape: [Int] { get }
    /// The distance in elements between neighbours along each dimension.
    var strides: [Int] { get }
    /// Whether the array is rank 0 (one scalar, shape `[]`).
    var isScalar: Bool { get }
    /// The total number of elements.
    var scalarCount: Int { get }
    /// The only element of a rank-0 array, or `nil` for any other rank.
    var scalar: Scalar? { get set }
    /// Every element, in row-major order.
    var scalars: [Scalar] { get set }

    /// Calls `body` with the elements' memory, the shape and the strides.
    func withUnsafeShapedBufferPointer<R>(
        _ body: (UnsafeBufferPointer<Scalar>, [Int], [Int]) throws -> R
    ) rethrows -> R
    /// Calls `body` with the elements' mutable memory, the shape and the strides.
    mutating func withUnsafeMutableShapedBufferPointer<R>(
        _ body: (inout UnsafeMutableBufferPointer<Scalar>, [Int], [Int]) throws -> R
    ) rethrows -> R

    /// The element at `indices`, one index per axis.
    subscript<C: Collection>(scalarAt indices: C) -> Scalar where C.Element == Int { get set }
    /// The slice with the leading `indices.count` axes fixed.
    subscript<C: Collection>(indices: C) -> MLShapedArraySlice<Scalar> where C.Element == Int { get set }

    /// Sets every element to `value`.
    mutating func fill(with value: Scalar)
}
