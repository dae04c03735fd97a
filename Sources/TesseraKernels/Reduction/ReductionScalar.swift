/// The arithmetic a reduction needs from its accumulator type, with NumPy semantics:
/// integer sums and products wrap in the type's width, floating-point ones follow IEEE 754.
protocol ReductionArithmetic: Comparable {
    /// The identity of `add`.
    static var zero: Self { get }
    /// The identity of `multiply`.
    static var one: Self { get }
    /// The identity of `max` (`-inf` for floats, `.min` for integers).
    static var lowest: Self { get }
    /// The identity of `min` (`+inf` for floats, `.max` for integers).
    static var highest: Self { get }
    static func add(_ a: Self, _ b: Self) -> Self
    static func multiply(_ a: Self, _ b: Self) -> Self
    /// Whether the value is a NaN (always false for integers).
    var isNaNValue: Bool { get }
    /// The value as a `Double`, for means and final divisions.
    var reductionDoubleValue: Double { get }
    init(fromDouble value: Double)
}

extension ReductionArithmetic where Self: BinaryFloatingPoint {
    @inline(__always) static var zero: Self { 0 }
    @inline(__always) static var one: Self { 1 }
    @inline(__always) static var lowest: Self { -.infinity }
    @inline(__always) static var highest: Self { .infinity }
    @inline(__always) static func add(_ a: Self, _ b: Self) -> Self { a + b }
    @inline(__always) static func multiply(_ a: Self, _ b: Self) -> Self { a * b }
    @inline(__always) var isNaNValue: Bool { isNaN }
    @inline(__always) var reductionDoubleValue: Double { Double(self) }
    @inline(__always) init(fromDouble value: Double) { self.init(value) }
}

extension ReductionArithmetic where Self: FixedWidthInteger {
    @inline(__always) static var zero: Self { 0 }
    @inline(__always) static var one: Self { 1 }
    @inline(__always) static var lowest: Self { .min }
    @inline(__always) static var highest: Self { .max }
    @inline(__always) static func add(_ a: Self, _ b: Self) -> Self { a &+ b }
    @inline(__always) static func multiply(_ a: Self, _ b: Self) -> Self { a &* b }
    @inline(__always) var isNaNValue: Bool { false }
    @inline(__always) var reductionDoubleValue: Double { Double(self) }
    @inline(__always) init(fromDouble value: Double) { self = wrappingInteger(value, as: Self.self) }
}

extension Float: ReductionArithmetic {}
extension Double: ReductionArithmetic {}
extension Int32: ReductionArithmetic {}
extension Int16: ReductionArithmetic {}
extension Int8: ReductionArithmetic {}
extension UInt32: ReductionArithmetic {}
extension UInt16: ReductionArithmetic {}
extension UInt8: ReductionArithmetic {}

/// An element type a reduction reads, with the wider type it accumulates in.
///
/// `Float16` accumulates in `Float`; every other type accumulates in itself (integers wrap,
/// as NumPy does when the output keeps the input's type). `bool` is read as `UInt8`.
protocol ReductionScalar: KernelScalar {
    associatedtype Wide: ReductionArithmetic
    /// The value in the accumulator type.
    var wide: Wide { get }
    /// The accumulator value rounded (or wrapped) back to this type.
    init(narrowing: Wide)
}

extension ReductionScalar where Self: ReductionArithmetic, Wide == Self {
    @inline(__always) var wide: Self { self }
    @inline(__always) init(narrowing value: Self) { self = value }
}

extension Float: ReductionScalar { typealias Wide = Float }
extension Double: ReductionScalar { typealias Wide = Double }
extension Int32: ReductionScalar { typealias Wide = Int32 }
extension Int16: ReductionScalar { typealias Wide = Int16 }
extension Int8: ReductionScalar { typealias Wide = Int8 }
extension UInt32: ReductionScalar { typealias Wide = UInt32 }
extension UInt16: ReductionScalar { typealias Wide = UInt16 }
extension UInt8: ReductionScalar { typealias Wide = UInt8 }

extension Float16: ReductionScalar {
    typealias Wide = Float
    @inline(__always) var wide: Float { HalfConversion.table[Int(bitPattern)] }
    @inline(__always) init(narrowing value: Float) { self = Float16(value) }
}

/// `float16` to `float32` through a table of all 65536 bit patterns.
///
/// On x86-64, Swift compiles `Float(Float16)` to a call into a runtime routine (about 6 ns per
/// element; the F16C instructions are not enabled by default); a table load is about 0.3 ns.
/// The table (256 KiB) is built on first use and never freed.
enum HalfConversion {
    nonisolated(unsafe) static let table: UnsafePointer<Float> = {
        let table = UnsafeMutablePointer<Float>.allocate(capacity: 1 << 16)
        for bits in 0..<(1 << 16) { table[bits] = Float(Float16(bitPattern: UInt16(bits))) }
        return UnsafePointer(table)
    }()
}
