import TesseraGraph
import TesseraKernels

/// A type that can be used to slice a dimension of a tensor.
///
/// `Int` (one index, dropping the dimension; negative counts from the end), `Range<Int>`,
/// `ClosedRange<Int>`, `PartialRangeFrom<Int>`, `PartialRangeUpTo<Int>` and
/// `PartialRangeThrough<Int>` conform, and the static members (``newAxis``, ``squeezeAxis``,
/// ``fillAll``, ``index(_:)``, strided ranges) build the rest:
///
/// ```swift
/// let x = MLTensor(zeros: [1, 3, 28, 28], scalarType: Float.self)
/// x[..., 0].shape                                   // [1, 3, 28]
/// x[0, nil, .range(0..<28, stride: 2)].shape        // [3, 14, 28]
/// x[.squeezeAxis, nil, -4 ..< -1, .newAxis].shape   // [3, 3, 1, 28]
/// ```
///
/// Don't conform your own types.
public protocol MLTensorRangeExpression: Sendable {}

/// The concrete range expression behind the static members of ``MLTensorRangeExpression``.
public struct _MLTensorRange: MLTensorRangeExpression, Hashable {
    enum Kind: Hashable {
        case newAxis, squeezeAxis, fillAll
        case index(Int)
        /// Bounds may be negative (counted from the end); nil is the start or end of the axis.
        case strided(lower: Int?, upper: Int?, closed: Bool, stride: Int)
    }
    let kind: Kind
}

extension MLTensorRangeExpression where Self == _MLTensorRange {
    /// Inserts a dimension of size 1 at this position.
    public static var newAxis: any MLTensorRangeExpression { _MLTensorRange(kind: .newAxis) }

    /// Removes this dimension, which must have size 1.
    public static var squeezeAxis: any MLTensorRangeExpression { _MLTensorRange(kind: .squeezeAxis) }

    /// Stands for every dimension not named by the other entries, as the `...` literal does.
    public static var fillAll: any MLTensorRangeExpression { _MLTensorRange(kind: .fillAll) }

    /// Selects one index and drops the dimension; negative values count from the end.
    public static func index(_ index: Int) -> any MLTensorRangeExpression {
        _MLTensorRange(kind: .index(index))
    }

    /// Every `stride`-th index of a range. A negative stride walks the range backwards from
    /// its last element (`.range(0..<5, stride: -2)` picks 4, 2, 0).
    public static func range(_ range: Range<Int>, stride: Int) -> any MLTensorRangeExpression {
        _MLTensorRange(kind: .strided(lower: range.lowerBound, upper: range.upperBound, closed: false, stride: stride))
    }

    /// Every `stride`-th index of a closed range.
    public static func closedRange(_ range: ClosedRange<Int>, stride: Int) -> any MLTensorRangeExpression {
        _MLTensorRange(kind: .strided(lower: range.lowerBound, upper: range.upperBound, closed: true, stride: stride))
    }

    /// Every `stride`-th index from a start to the end of the dimension.
    public static func partialRangeFrom(_ range: PartialRangeFrom<Int>, stride: Int) -> any MLTensorRangeExpression {
        _MLTensorRange(kind: .strided(lower: range.lowerBound, upper: nil, closed: false, stride: stride))
    }

    /// Every `stride`-th index from the start of the dimension up to, not including, an end.
    public static func partialRangeUpTo(_ range: PartialRangeUpTo<Int>, stride: Int) -> any MLTensorRangeExpression {
        _MLTensorRange(kind: .strided(lower: nil, upper: range.upperBound, closed: false, stride: stride))
    }

    /// Every `stride`-th index from the start of the dimension through an end (Core ML names
    /// this overload `partialRangeUpTo` too).
    public static func partialRangeUpTo(_ range: PartialRangeThrough<Int>, stride: Int)
        -> any MLTensorRangeExpression
    {
        _MLTensorRange(kind: .strided(lower: nil, upper: range.upperBound, closed: true, stride: stride))
    }
}

extension Int: MLTensorRangeExpression {}
extension Range: MLTensorRangeExpression where Bound == Int {}
extension ClosedRange: MLTensorRangeExpression where Bound == Int {}
extension PartialRangeFrom: MLTensorRangeExpression where Bound == Int {}
extension PartialRangeUpTo: MLTensorRangeExpression where Bound == Int {}
extension PartialRangeThrough: MLTensorRangeExpression where Bound == Int {}

extension _MLTensorRange.Kind {
    /// The kind of any conforming expression; `nil` is a whole dimension.
    static func of(_ expression: (any MLTensorRangeExpression)?) -> Self {
        switch expression {
        case nil: return .strided(lower: nil, upper: nil, closed: false, stride: 1)
        case let e as _MLTensorRange: return e.kind
        case let i as Int: return .index(i)
        case let r as Range<Int>: return .strided(lower: r.lowerBound, upper: r.upperBound, closed: false, stride: 1)
        case let r as ClosedRange<Int>:
            return .strided(lower: r.lowerBound, upper: r.upperBound, closed: true, stride: 1)
        case let r as PartialRangeFrom<Int>: return .strided(lower: r.lowerBound, upper: nil, closed: false, stride: 1)
        case let r as PartialRangeUpTo<Int>: return .strided(lower: nil, upper: r.upperBound, closed: false, stride: 1)
        case let r as PartialRangeThrough<Int>:
            return .strided(lower: nil, upper: r.upperBound, closed: true, stride: 1)
        default:
            // Inside `withShapeChecks` the unknown expression is recorded and reads as a whole dimension.
            ShapeChecks.report(OpError("[subscript] \(type(of: expression!)) is not a tensor range expression"))
            return .strided(lower: nil, upper: nil, closed: false, stride: 1)
        }
    }
}
