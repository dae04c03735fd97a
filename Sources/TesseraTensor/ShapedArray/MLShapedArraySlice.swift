import Foundation
import TesseraGraph
import TesseraKernels

/// A sub-array of an `MLShapedArray` (an element along its first axis, or deeper), sharing the
/// array's storage until either is mutated.
///
/// ```swift
/// let a = MLShapedArray<Int32>(scalars: [1, 2, 3, 4], shape: [2, 2])
/// a[1].scalars   // [3, 4]
/// ```
public struct MLShapedArraySlice<Scalar: MLShapedArrayScalar>: MLShapedArrayProtocol, @unchecked Sendable {
    package var array: MLShapedArray<Scalar>

    package init(array: MLShapedArray<Scalar>) {
        self.array = array
    }

    public init<S: Sequence>(scalars: S, shape: [Int]) where S.Element == Scalar {
        array = MLShapedArray(scalars: scalars, shape: shape)
    }

    public init(repeating value: Scalar, shape: [Int]) {
        array = MLShapedArray(repeating: value, shape: shape)
    }

    public init(arrayLiteral elements: Scalar...) {
        array = MLShapedArray(scalars: elements, shape: [elements.count])
    }

    public var shape: [Int] { array.shape }
    public var strides: [Int] { array.strides }
    public var scalarCount: Int { array.scalarCount }
    public var scalars: [Scalar] {
        get { array.scalars }
        set { array.scalars = newValue }
    }
    public var scalar: Scalar? {
        get { array.scalar }
        set { array.scalar = newValue }
    }
    public var _tensorValue: TensorValue { array._tensorValue }

    /// The scalar at a full index.
    public subscript<C: Collection>(scalarAt indices: C) -> Scalar where C.Element == Int {
        get { array[scalarAt: indices] }
        set { array[scalarAt: indices] = newValue }
    }

    /// The scalar at a full index, variadic form.
    public subscript(scalarAt indices: Int...) -> Scalar {
        get { array[scalarAt: indices] }
        set { array[scalarAt: indices] = newValue }
    }

    /// Calls `body` with the scalars, the shape and the strides.
    public func withUnsafeShapedBufferPointer<R>(
        _ body: (UnsafeBufferPointer<Scalar>, [Int], [Int]) throws -> R
    ) rethrows -> R {
        try array.withUnsafeShapedBufferPointer(body)
    }

    /// Calls `body` with mutable access to the scalars, the shape and the strides.
    public mutating func withUnsafeMutableShapedBufferPointer<R>(
        _ body: (inout UnsafeMutableBufferPointer<Scalar>, [Int], [Int]) throws -> R
    ) rethrows -> R {
        try array.withUnsafeMutableShapedBufferPointer(body)
    }

    /// Sets every scalar to `value`.
    public mutating func fill(with value: Scalar) { array.fill(with: value) }

    public var startIndex: Int { 0 }
    public var endIndex: Int { shape.first ?? 0 }

    /// The slice at `index` along the first axis.
    public subscript(index: Int) -> MLShapedArraySlice<Scalar> {
        get { array[index] }
        set { array[index] = newValue }
    }
}

extension MLShapedArraySlice: Equatable {
    public static func == (lhs: MLShapedArraySlice, rhs: MLShapedArraySlice) -> Bool { lhs.array == rhs.array }
}

extension MLShapedArraySlice: CustomStringConvertible {
    public var description: String { array.description }
}

extension MLShapedArray {
    /// Creates an array holding a slice's scalars (sharing its storage until either changes).
    public init(_ slice: MLShapedArraySlice<Scalar>) {
        self = slice.array
    }
}
