import Foundation
import TesseraKernels

/// A part of a shaped array — a first-axis element, a range of rows, a block — with the same
/// API as ``MLShapedArray``: Core ML's `MLShapedArraySlice`.
///
/// A slice is its own value: it shares its base array's memory until either is mutated, then
/// copies (copy-on-write), so mutating a slice never changes the array it came from. To change
/// part of an array, assign through the array's subscript:
///
/// ```swift
/// var m = MLShapedArray<Float>(scalars: 0..<6, shape: [2, 3])
/// var row = m[0]                     // [0, 1, 2], shares m's memory
/// row[scalarAt: 0] = 9               // row copies; m is unchanged
/// m[1] = row                         // m is [[0, 1, 2], [9, 1, 2]]
/// m[0][scalarAt: 2] = 7              // get, mutate and set back in one statement
/// ```
///
/// Nested writes such as `m[0][scalarAt: 2] = 7` copy the slice once; write scalars with
/// `m[scalarAt: 0, 2]` in loops.
public struct MLShapedArraySlice<Scalar: MLShapedArrayScalar>: _MLShapedArrayCoreBacked, Sendable {
    /// The first-axis slices are the elements.
    public typealias Element = MLShapedArraySlice<Scalar>
    /// Positions along the first axis.
    public typealias Index = Int
    /// The valid positions, `0..<count`.
    public typealias Indices = Range<Int>
    /// A range of first-axis slices is a slice (its indices start at 0).
    public typealias SubSequence = MLShapedArraySlice<Scalar>
    /// Array literals list the scalars of a one-dimensional slice.
    public typealias ArrayLiteralElement = Scalar

    /// Tessera-internal storage and layout; don't use.
    public var _core: _ShapedArrayCore<Scalar>

    /// Tessera-internal: wraps storage without copying; don't use.
    public init(_core: _ShapedArrayCore<Scalar>) {
        self._core = _core
    }

    /// `MLShapedArraySlice`, for trap messages.
    public static var _typeName: String { "MLShapedArraySlice" }
}
