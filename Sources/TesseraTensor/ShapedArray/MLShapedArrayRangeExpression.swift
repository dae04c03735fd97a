/// A range expression that selects part of one axis of a shaped array.
///
/// `Range<Int>`, `ClosedRange<Int>`, `PartialRangeFrom<Int>`, `PartialRangeUpTo<Int>` and
/// `PartialRangeThrough<Int>` conform, so any of them can be mixed in a ranges subscript:
///
/// ```swift
/// let m = MLShapedArray<Float>(scalars: 0..<12, shape: [3, 4])
/// let corner = m[1..., ..<2]          // shape [2, 2]: [[4, 5], [8, 9]]
/// ```
public protocol MLShapedArrayRangeExpression {
    /// Returns the range of indices the expression selects within `axis` (an axis's
    /// `0..<size`); partial ranges are completed from the axis bounds.
    func relative(toShapedArrayAxis axis: Range<Int>) -> Range<Int>
}

extension Range: MLShapedArrayRangeExpression where Bound == Int {
    /// The range itself.
    public func relative(toShapedArrayAxis axis: Range<Int>) -> Range<Int> { self }
}

extension ClosedRange: MLShapedArrayRangeExpression where Bound == Int {
    /// `lowerBound..<upperBound + 1`.
    public func relative(toShapedArrayAxis axis: Range<Int>) -> Range<Int> { lowerBound..<(upperBound + 1) }
}

extension PartialRangeFrom: MLShapedArrayRangeExpression where Bound == Int {
    /// `lowerBound..<axis.upperBound`.
    public func relative(toShapedArrayAxis axis: Range<Int>) -> Range<Int> {
        lowerBound..<Swift.max(lowerBound, axis.upperBound)
    }
}

extension PartialRangeUpTo: MLShapedArrayRangeExpression where Bound == Int {
    /// `axis.lowerBound..<upperBound`.
    public func relative(toShapedArrayAxis axis: Range<Int>) -> Range<Int> {
        axis.lowerBound..<Swift.max(axis.lowerBound, upperBound)
    }
}

extension PartialRangeThrough: MLShapedArrayRangeExpression where Bound == Int {
    /// `axis.lowerBound..<upperBound + 1`.
    public func relative(toShapedArrayAxis axis: Range<Int>) -> Range<Int> {
        axis.lowerBound..<Swift.max(axis.lowerBound, upperBound + 1)
    }
}
