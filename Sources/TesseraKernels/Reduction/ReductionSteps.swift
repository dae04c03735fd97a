/// One reduction op over one element type: how to start, fold one element in, fold a run of
/// elements in, merge two partial results and produce the output element.
///
/// The driver (``ReductionDriver``) decides the iteration order; a step only sees values.
/// Elements reach `accumulate` in row-major order of the reduced axes, which the index
/// reductions rely on.
protocol ReductionStep {
    associatedtype Element: ReductionScalar
    associatedtype Accumulator
    associatedtype Result
    /// The state before any element.
    static var initial: Accumulator { get }
    /// Folds in the next element.
    static func accumulate(_ acc: inout Accumulator, _ x: Element)
    /// Folds in `count` elements `stride` apart, in order.
    static func accumulateRun(_ acc: inout Accumulator, _ p: UnsafePointer<Element>, count: Int, stride: Int)
    /// Folds the contiguous row `p[0..<count]` into the column accumulators `acc[0..<count]`.
    static func accumulateRow(_ acc: UnsafeMutablePointer<Accumulator>, _ p: UnsafePointer<Element>, count: Int)
    /// Merges the result of an earlier range of reduced indices (`a`) with that of the range
    /// right after it (`b`), so a long reduction can be split across threads.
    static func combine(_ a: Accumulator, _ b: Accumulator) -> Accumulator
    /// The output element after `count` elements.
    static func finish(_ acc: Accumulator, count: Int) -> Result
    /// For `argmax` (true) and `argmin` (false): the driver has a SIMD rows path for them.
    static var argDirection: Bool? { get }
}

extension ReductionStep {
    static var argDirection: Bool? { nil }

    @inline(__always)
    static func accumulateRun(_ acc: inout Accumulator, _ p: UnsafePointer<Element>, count: Int, stride: Int) {
        var q = p
        for _ in 0..<count {
            accumulate(&acc, q.pointee)
            q += stride
        }
    }

    @inline(__always)
    static func accumulateRow(_ acc: UnsafeMutablePointer<Accumulator>, _ p: UnsafePointer<Element>, count: Int) {
        for j in 0..<count { accumulate(&acc[j], p[j]) }
    }
}

/// Reinterprets a pointer when the generic type is known (after specialisation) to be `Float`.
@inline(__always)
func asFloatPointer<T>(_ p: UnsafePointer<T>) -> UnsafePointer<Float> {
    UnsafeRawPointer(p).assumingMemoryBound(to: Float.self)
}

@inline(__always)
func asFloatPointer<T>(_ p: UnsafeMutablePointer<T>) -> UnsafeMutablePointer<Float> {
    UnsafeMutableRawPointer(p).assumingMemoryBound(to: Float.self)
}

/// `sum` (and, with ``MeanStep``, `mean`) in the element's accumulator type.
enum SumStep<Element: ReductionScalar>: ReductionStep {
    static var initial: Element.Wide { .zero }
    @inline(__always) static func accumulate(_ acc: inout Element.Wide, _ x: Element) {
        acc = .add(acc, x.wide)
    }
    @inline(__always)
    static func accumulateRun(_ acc: inout Element.Wide, _ p: UnsafePointer<Element>, count: Int, stride: Int) {
        if Element.self == Float.self && stride == 1 {
            let s = FloatReduction.sum(asFloatPointer(p), count: count)
            acc = .add(acc, unsafeBitCast(s, to: Element.Wide.self))
            return
        }
        // Four independent chains: shorter dependency chains and a little pairwise accuracy.
        var a0 = Element.Wide.zero
        var a1 = Element.Wide.zero
        var a2 = Element.Wide.zero
        var a3 = Element.Wide.zero
        var i = 0
        var q = p
        while i + 4 <= count {
            a0 = .add(a0, q.pointee.wide)
            a1 = .add(a1, q[stride].wide)
            a2 = .add(a2, q[2 * stride].wide)
            a3 = .add(a3, q[3 * stride].wide)
            q += 4 * stride
            i += 4
        }
        while i < count {
            a0 = .add(a0, q.pointee.wide)
            q += stride
            i += 1
        }
        acc = .add(acc, .add(.add(a0, a1), .add(a2, a3)))
    }
    @inline(__always)
    static func accumulateRow(_ acc: UnsafeMutablePointer<Element.Wide>, _ p: UnsafePointer<Element>, count: Int) {
        if Element.self == Float.self {
            FloatReduction.addRow(asFloatPointer(acc), asFloatPointer(p), count: count)
            return
        }
        for j in 0..<count { acc[j] = .add(acc[j], p[j].wide) }
    }
    static func combine(_ a: Element.Wide, _ b: Element.Wide) -> Element.Wide { .add(a, b) }
    static func finish(_ acc: Element.Wide, count: Int) -> Element { Element(narrowing: acc) }
}

/// `mean` of a floating-point type: the sum in the accumulator type, divided at the end.
enum MeanStep<Element: ReductionScalar>: ReductionStep {
    static var initial: Element.Wide { .zero }
    @inline(__always) static func accumulate(_ acc: inout Element.Wide, _ x: Element) {
        acc = .add(acc, x.wide)
    }
    @inline(__always)
    static func accumulateRun(_ acc: inout Element.Wide, _ p: UnsafePointer<Element>, count: Int, stride: Int) {
        SumStep<Element>.accumulateRun(&acc, p, count: count, stride: stride)
    }
    @inline(__always)
    static func accumulateRow(_ acc: UnsafeMutablePointer<Element.Wide>, _ p: UnsafePointer<Element>, count: Int) {
        SumStep<Element>.accumulateRow(acc, p, count: count)
    }
    static func combine(_ a: Element.Wide, _ b: Element.Wide) -> Element.Wide { .add(a, b) }
    static func finish(_ acc: Element.Wide, count: Int) -> Element {
        Element(narrowing: Element.Wide(fromDouble: acc.reductionDoubleValue / Double(count)))
    }
}

/// `mean` of an integer type into a floating-point output: an exact sum in `Double`.
enum IntegerMeanStep<Element: ReductionScalar, Result: BinaryFloatingPoint>: ReductionStep {
    static var initial: Double { 0 }
    @inline(__always) static func accumulate(_ acc: inout Double, _ x: Element) {
        acc += x.wide.reductionDoubleValue
    }
    static func combine(_ a: Double, _ b: Double) -> Double { a + b }
    static func finish(_ acc: Double, count: Int) -> Result { Result(acc / Double(count)) }
}

/// `product` in the element's accumulator type.
enum ProductStep<Element: ReductionScalar>: ReductionStep {
    static var initial: Element.Wide { .one }
    @inline(__always) static func accumulate(_ acc: inout Element.Wide, _ x: Element) {
        acc = .multiply(acc, x.wide)
    }
    @inline(__always)
    static func accumulateRun(_ acc: inout Element.Wide, _ p: UnsafePointer<Element>, count: Int, stride: Int) {
        if Element.self == Float.self && stride == 1 {
            let s = FloatReduction.product(asFloatPointer(p), count: count)
            acc = .multiply(acc, unsafeBitCast(s, to: Element.Wide.self))
            return
        }
        var q = p
        for _ in 0..<count {
            acc = .multiply(acc, q.pointee.wide)
            q += stride
        }
    }
    @inline(__always)
    static func accumulateRow(_ acc: UnsafeMutablePointer<Element.Wide>, _ p: UnsafePointer<Element>, count: Int) {
        if Element.self == Float.self {
            FloatReduction.multiplyRow(asFloatPointer(acc), asFloatPointer(p), count: count)
            return
        }
        for j in 0..<count { acc[j] = .multiply(acc[j], p[j].wide) }
    }
    static func combine(_ a: Element.Wide, _ b: Element.Wide) -> Element.Wide { .multiply(a, b) }
    static func finish(_ acc: Element.Wide, count: Int) -> Element { Element(narrowing: acc) }
}

/// `max` (`isMax`) or `min`; a NaN anywhere makes the result NaN.
enum ExtremumStep<Element: ReductionScalar, Direction: ExtremumDirection>: ReductionStep {
    static var initial: Element.Wide { Direction.isMax ? .lowest : .highest }
    /// Whether `x` replaces `acc`: it is strictly better, or a NaN (once `acc` is NaN
    /// nothing compares better, so NaN sticks).
    @inline(__always) static func replaces(_ x: Element.Wide, _ acc: Element.Wide) -> Bool {
        (Direction.isMax ? x > acc : x < acc) || x.isNaNValue
    }
    @inline(__always) static func accumulate(_ acc: inout Element.Wide, _ x: Element) {
        let v = x.wide
        if replaces(v, acc) { acc = v }
    }
    @inline(__always)
    static func accumulateRun(_ acc: inout Element.Wide, _ p: UnsafePointer<Element>, count: Int, stride: Int) {
        if Element.self == Float.self && stride == 1 {
            let s = FloatReduction.extremum(asFloatPointer(p), count: count, isMax: Direction.isMax)
            acc = combine(acc, unsafeBitCast(s, to: Element.Wide.self))
            return
        }
        var q = p
        for _ in 0..<count {
            accumulate(&acc, q.pointee)
            q += stride
        }
    }
    @inline(__always)
    static func accumulateRow(_ acc: UnsafeMutablePointer<Element.Wide>, _ p: UnsafePointer<Element>, count: Int) {
        if Element.self == Float.self {
            FloatReduction.extremumRow(asFloatPointer(acc), asFloatPointer(p), count: count, isMax: Direction.isMax)
            return
        }
        for j in 0..<count { accumulate(&acc[j], p[j]) }
    }
    static func combine(_ a: Element.Wide, _ b: Element.Wide) -> Element.Wide {
        if a.isNaNValue { return a }
        return replaces(b, a) ? b : a
    }
    static func finish(_ acc: Element.Wide, count: Int) -> Element { Element(narrowing: acc) }
}

/// Chooses between maximum and minimum at compile time.
protocol ExtremumDirection {
    static var isMax: Bool { get }
}

/// Selects the maximum (`max`, `argmax`).
enum Maximum: ExtremumDirection { static var isMax: Bool { true } }
/// Selects the minimum (`min`, `argmin`).
enum Minimum: ExtremumDirection { static var isMax: Bool { false } }

/// `all` (`isAll`) or `any`: non-zero (including NaN) is true.
enum LogicalStep<Element: ReductionScalar, Kind: LogicalKind>: ReductionStep {
    static var initial: Bool { Kind.isAll }
    @inline(__always) static func accumulate(_ acc: inout Bool, _ x: Element) {
        let truth = x.wide != .zero
        acc = Kind.isAll ? (acc && truth) : (acc || truth)
    }
    static func combine(_ a: Bool, _ b: Bool) -> Bool { Kind.isAll ? (a && b) : (a || b) }
    static func finish(_ acc: Bool, count: Int) -> Bool { acc }
}

/// Chooses between `all` and `any` at compile time.
protocol LogicalKind {
    static var isAll: Bool { get }
}

/// Selects `all`.
enum LogicalAll: LogicalKind { static var isAll: Bool { true } }
/// Selects `any`.
enum LogicalAny: LogicalKind { static var isAll: Bool { false } }

/// The running state of `argmax`/`argmin`: the best value, where it was, how many elements
/// have been seen.
struct ArgAccumulator<Value> {
    var best: Value
    var index: Int32
    var seen: Int32
}

/// `argmax`/`argmin`: the first index of the extreme value; the first NaN wins (NumPy).
enum ArgStep<Element: ReductionScalar, Direction: ExtremumDirection>: ReductionStep {
    static var initial: ArgAccumulator<Element.Wide> {
        ArgAccumulator(best: Direction.isMax ? .lowest : .highest, index: 0, seen: 0)
    }
    /// Whether `x` strictly beats `best` (ties keep the earlier index; a NaN beats anything
    /// but another NaN).
    @inline(__always) static func beats(_ x: Element.Wide, _ best: Element.Wide) -> Bool {
        if best.isNaNValue { return false }
        return (Direction.isMax ? x > best : x < best) || x.isNaNValue
    }
    @inline(__always) static func accumulate(_ acc: inout ArgAccumulator<Element.Wide>, _ x: Element) {
        let v = x.wide
        if acc.seen == 0 || beats(v, acc.best) {
            acc.best = v
            acc.index = acc.seen
        }
        acc.seen &+= 1
    }
    @inline(__always)
    static func accumulateRun(
        _ acc: inout ArgAccumulator<Element.Wide>, _ p: UnsafePointer<Element>, count: Int, stride: Int
    ) {
        if Element.self == Float.self && stride == 1 && count > 0 {
            let (value, index) = FloatReduction.argExtremum(asFloatPointer(p), count: count, isMax: Direction.isMax)
            let v = unsafeBitCast(value, to: Element.Wide.self)
            if acc.seen == 0 || beats(v, acc.best) {
                acc.best = v
                acc.index = acc.seen &+ Int32(index)
            }
            acc.seen &+= Int32(count)
            return
        }
        var q = p
        for _ in 0..<count {
            accumulate(&acc, q.pointee)
            q += stride
        }
    }
    static func combine(_ a: ArgAccumulator<Element.Wide>, _ b: ArgAccumulator<Element.Wide>)
        -> ArgAccumulator<Element.Wide>
    {
        guard b.seen > 0 else { return a }
        var result = a
        if a.seen == 0 || beats(b.best, a.best) {
            result.best = b.best
            result.index = a.seen &+ b.index
        }
        result.seen = a.seen &+ b.seen
        return result
    }
    static func finish(_ acc: ArgAccumulator<Element.Wide>, count: Int) -> Int32 { acc.index }
    static var argDirection: Bool? { Direction.isMax }
}
