import Foundation
import TesseraGraph
import TesseraKernels

/// The interface `MLShapedArray` and `MLShapedArraySlice` share: a shaped, typed,
/// row-major collection of scalars whose elements along the first axis are slices.
public protocol MLShapedArrayProtocol<Scalar>: ExpressibleByArrayLiteral, MutableCollection, RandomAccessCollection
where Index == Int, Element == MLShapedArraySlice<Scalar> {
    associatedtype Scalar: MLShapedArrayScalar

    /// Creates an array of `shape` from scalars in row-major order.
    init<S: Sequence>(scalars: S, shape: [Int]) where S.Element == Scalar
    /// Creates an array of `shape` filled with `value`.
    init(repeating value: Scalar, shape: [Int])

    /// The size of each dimension.
    var shape: [Int] { get }
    /// The distance in elements between neighbours along each dimension (row-major).
    var strides: [Int] { get }
    /// The number of scalars.
    var scalarCount: Int { get }
    /// The scalars in row-major order.
    var scalars: [Scalar] { get set }

    /// **Tessera internal.** The elements as a kernel-layer value, without copying.
    var _tensorValue: TensorValue { get }
}

extension MLShapedArrayProtocol {
    /// Whether the array has rank 0.
    public var isScalar: Bool { shape.isEmpty }
}
