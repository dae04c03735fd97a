import Foundation
import TesseraKernels

/// A multidimensional array of scalars with value semantics: Core ML's `MLShapedArray`.
///
/// An array has a ``shape`` (dimension sizes, `[]` for a single scalar) and its scalars in
/// memory described by ``strides``. It is a collection of ``MLShapedArraySlice`` values along
/// its first axis, with `count == shape[0]`.
///
/// Copies share memory until one of them is mutated (copy-on-write), so passing arrays around
/// and across tasks is cheap and safe. Views (``transposed()``, slices, reshapes of contiguous
/// data) share memory too; reading through any strides works everywhere.
///
/// ```swift
/// var m = MLShapedArray<Float>(scalars: [1, 2, 3, 4, 5, 6], shape: [2, 3])
/// m[scalarAt: 0, 1] = 20
/// m[1].scalars                  // [4, 5, 6]
/// m.transposed().scalars        // [1, 4, 20, 5, 3, 6]
/// ```
///
/// Programmer errors — a scalar count that does not match the shape, an index out of range, a
/// bad axis — stop the program with a message naming the member and the shapes.
public struct MLShapedArray<Scalar: MLShapedArrayScalar>: _MLShapedArrayCoreBacked, Sendable {
    /// The first-axis slices are the elements.
    public typealias Element = MLShapedArraySlice<Scalar>
    /// Positions along the first axis.
    public typealias Index = Int
    /// The valid positions, `0..<count`.
    public typealias Indices = Range<Int>
    /// A range of first-axis slices is a slice (its indices start at 0).
    public typealias SubSequence = MLShapedArraySlice<Scalar>
    /// Array literals list the scalars of a one-dimensional array.
    public typealias ArrayLiteralElement = Scalar

    /// Tessera-internal storage and layout; don't use.
    public var _core: _ShapedArrayCore<Scalar>

    /// Tessera-internal: wraps storage without copying; don't use.
    public init(_core: _ShapedArrayCore<Scalar>) {
        self._core = _core
    }

    /// `MLShapedArray`, for trap messages.
    public static var _typeName: String { "MLShapedArray" }

    /// Creates an array with the slice's shape and scalars, sharing its memory until either is
    /// mutated. **Tessera extension.**
    ///
    /// ```swift
    /// let row = MLShapedArray(m[0])     // shape [3]
    /// ```
    public init(_ slice: MLShapedArraySlice<Scalar>) {
        self.init(_core: slice._core)
    }
}
