/// Element type conversion between any two ``KernelScalarType``s over contiguous memory.
///
/// The rules are NumPy's `astype` with defined results where C leaves them undefined:
/// float → integer truncates toward zero and wraps to the target width (NaN and values
/// beyond ±9.2e18 give 0); integer → float rounds to nearest; anything → `bool` is
/// `value != 0` (NaN is true); `bool` → anything is 0 or 1. `float16` ⇄ `float32` uses the
/// vectorised ``Float16Conversion``.
///
/// ```swift
/// ScalarConversion.convert(pixels, from: .uint8, into: floats, to: .float32, count: n)
/// ```
package enum ScalarConversion {
    /// Converts `count` contiguous elements of type `sourceType` into `destination` as
    /// `destinationType`. When the types are equal this is a copy.
    ///
    /// - Precondition: the ranges do not overlap unless `source == destination` and the
    ///   types have the same byte count.
    package static func convert(
        _ source: UnsafeRawPointer, from sourceType: KernelScalarType,
        into destination: UnsafeMutableRawPointer, to destinationType: KernelScalarType, count: Int
    ) {
        guard count > 0 else { return }
        if sourceType == destinationType {
            if source != UnsafeRawPointer(destination) {
                destination.copyMemory(from: source, byteCount: count * sourceType.byteCount)
            }
            return
        }
        if sourceType == .float16 && destinationType == .float32 {
            Float16Conversion.widen(
                source.assumingMemoryBound(to: Float16.self),
                into: destination.assumingMemoryBound(to: Float.self), count: count)
            return
        }
        if sourceType == .float32 && destinationType == .float16 {
            Float16Conversion.narrow(
                source.assumingMemoryBound(to: Float.self),
                into: destination.assumingMemoryBound(to: Float16.self), count: count)
            return
        }
        switch sourceType {
        case .float32: convert(source, Float.self, destination, destinationType, count)
        case .float16: convert(source, Float16.self, destination, destinationType, count)
        case .float64: convert(source, Double.self, destination, destinationType, count)
        case .int32: convert(source, Int32.self, destination, destinationType, count)
        case .int8: convert(source, Int8.self, destination, destinationType, count)
        case .uint8: convert(source, UInt8.self, destination, destinationType, count)
        case .int16: convert(source, Int16.self, destination, destinationType, count)
        case .uint16: convert(source, UInt16.self, destination, destinationType, count)
        case .uint32: convert(source, UInt32.self, destination, destinationType, count)
        case .bool: convert(source, Bool.self, destination, destinationType, count)
        }
    }

    private static func convert<S: ConvertibleScalar>(
        _ source: UnsafeRawPointer, _: S.Type, _ destination: UnsafeMutableRawPointer,
        _ destinationType: KernelScalarType, _ count: Int
    ) {
        let src = source.assumingMemoryBound(to: S.self)
        switch destinationType {
        case .float32: convertLoop(src, destination.assumingMemoryBound(to: Float.self), count)
        case .float16: convertLoop(src, destination.assumingMemoryBound(to: Float16.self), count)
        case .float64: convertLoop(src, destination.assumingMemoryBound(to: Double.self), count)
        case .int32: convertLoop(src, destination.assumingMemoryBound(to: Int32.self), count)
        case .int8: convertLoop(src, destination.assumingMemoryBound(to: Int8.self), count)
        case .uint8: convertLoop(src, destination.assumingMemoryBound(to: UInt8.self), count)
        case .int16: convertLoop(src, destination.assumingMemoryBound(to: Int16.self), count)
        case .uint16: convertLoop(src, destination.assumingMemoryBound(to: UInt16.self), count)
        case .uint32: convertLoop(src, destination.assumingMemoryBound(to: UInt32.self), count)
        case .bool: convertLoop(src, destination.assumingMemoryBound(to: Bool.self), count)
        }
    }

    @inline(__always)
    private static func convertLoop<S: ConvertibleScalar, D: ConvertibleScalar>(
        _ src: UnsafePointer<S>, _ dst: UnsafeMutablePointer<D>, _ count: Int
    ) {
        for i in 0..<count { dst[i] = D.converting(src[i]) }
    }
}

/// A scalar that converts from every other kernel scalar with the kernel's rules.
@usableFromInline
protocol ConvertibleScalar: KernelScalar {
    static func converting<S: ConvertibleScalar>(_ value: S) -> Self
    /// The value as a float (for float destinations).
    var asDouble: Double { get }
    var asFloat: Float { get }
    /// The value as a wrapped 64-bit integer (for integer destinations).
    var asInt64: Int64 { get }
    var isNonZero: Bool { get }
}

extension ConvertibleScalar where Self: BinaryFloatingPoint {
    @inlinable @inline(__always) var asDouble: Double { Double(self) }
    @inlinable @inline(__always) var asFloat: Float { Float(self) }
    @inlinable @inline(__always) var asInt64: Int64 {
        guard self.isFinite, self > -9.2e18, self < 9.2e18 else { return 0 }
        // The concrete conversions truncate toward zero in one instruction; the generic
        // `Int64(_: some BinaryFloatingPoint)` takes the standard library's bit-by-bit path
        // (about 20 ns an element: a fused `cast` of a float mask to `int8` ran at that pace).
        if Self.self == Float.self { return Int64(unsafeBitCast(self, to: Float.self)) }
        if Self.self == Double.self { return Int64(unsafeBitCast(self, to: Double.self)) }
        if Self.self == Float16.self { return Int64(Float(unsafeBitCast(self, to: Float16.self))) }
        return Int64(self.rounded(.towardZero))
    }
    @inlinable @inline(__always) var isNonZero: Bool { self != 0 }
    @inlinable @inline(__always) static func converting<S: ConvertibleScalar>(_ value: S) -> Self {
        if S.self == Float.self || S.self == Float16.self { return Self(value.asFloat) }
        return Self(value.asDouble)
    }
}

extension ConvertibleScalar where Self: FixedWidthInteger {
    @inlinable @inline(__always) var asDouble: Double { Double(self) }
    @inlinable @inline(__always) var asFloat: Float { Float(self) }
    @inlinable @inline(__always) var asInt64: Int64 { Int64(truncatingIfNeeded: self) }
    @inlinable @inline(__always) var isNonZero: Bool { self != 0 }
    @inlinable @inline(__always) static func converting<S: ConvertibleScalar>(_ value: S) -> Self {
        Self(truncatingIfNeeded: value.asInt64)
    }
}

extension Float: ConvertibleScalar {}
extension Float16: ConvertibleScalar {}
extension Double: ConvertibleScalar {}
extension Int32: ConvertibleScalar {}
extension Int8: ConvertibleScalar {}
extension UInt8: ConvertibleScalar {}
extension Int16: ConvertibleScalar {}
extension UInt16: ConvertibleScalar {}
extension UInt32: ConvertibleScalar {}

extension Bool: ConvertibleScalar {
    @inlinable @inline(__always) var asDouble: Double { self ? 1 : 0 }
    @inlinable @inline(__always) var asFloat: Float { self ? 1 : 0 }
    @inlinable @inline(__always) var asInt64: Int64 { self ? 1 : 0 }
    @inlinable @inline(__always) var isNonZero: Bool { self }
    @inlinable @inline(__always) static func converting<S: ConvertibleScalar>(_ value: S) -> Bool {
        value.isNonZero
    }
}
