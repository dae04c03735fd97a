/// The element types the kernel layer understands.
///
/// Every kernel takes raw memory plus one of these tags. `bool` is stored as one byte holding
/// 0 or 1, the same representation Swift's `Bool` uses, so a `[Bool]` buffer can be handed to
/// a kernel as is.
///
/// ```swift
/// KernelScalarType.float16.byteCount   // 2
/// KernelScalarType.int8.isSigned       // true
/// ```
public enum KernelScalarType: UInt8, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case float32
    case float16
    case float64
    case int32
    case int8
    case uint8
    case int16
    case uint16
    case uint32
    case bool

    /// The number of bytes one element occupies.
    @inlinable
    public var byteCount: Int {
        switch self {
        case .float64: return 8
        case .float32, .int32, .uint32: return 4
        case .float16, .int16, .uint16: return 2
        case .int8, .uint8, .bool: return 1
        }
    }

    /// Whether the type is a floating-point type (`float16`, `float32`, `float64`).
    @inlinable
    public var isFloatingPoint: Bool {
        switch self {
        case .float16, .float32, .float64: return true
        default: return false
        }
    }

    /// Whether the type is an integer type (signed or unsigned, not `bool`).
    @inlinable
    public var isInteger: Bool {
        switch self {
        case .int8, .int16, .int32, .uint8, .uint16, .uint32: return true
        default: return false
        }
    }

    /// Whether the type can hold negative values.
    @inlinable
    public var isSigned: Bool {
        switch self {
        case .float16, .float32, .float64, .int8, .int16, .int32: return true
        default: return false
        }
    }

    /// The lowercase name used in messages, e.g. `float32`.
    public var description: String {
        switch self {
        case .float32: return "float32"
        case .float16: return "float16"
        case .float64: return "float64"
        case .int32: return "int32"
        case .int8: return "int8"
        case .uint8: return "uint8"
        case .int16: return "int16"
        case .uint16: return "uint16"
        case .uint32: return "uint32"
        case .bool: return "bool"
        }
    }
}

/// A Swift type that kernels can read and write directly.
///
/// `Float`, `Float16`, `Double`, `Int32`, `Int8`, `UInt8`, `Int16`, `UInt16`, `UInt32` and
/// `Bool` conform. Generic kernels use `kernelScalarType` to find the tag for their `T`.
public protocol KernelScalar: Sendable {
    /// The tag for this type.
    static var kernelScalarType: KernelScalarType { get }
    /// The value as a `Double` (exact for every conforming type).
    var kernelDoubleValue: Double { get }
    /// Converts from `Double` the way a cast kernel does: floats round to nearest, integers
    /// truncate toward zero and wrap to the type's width, `Bool` is `value != 0`.
    init(kernelDoubleValue: Double)
}

extension Float: KernelScalar {
    @inlinable public static var kernelScalarType: KernelScalarType { .float32 }
    @inlinable public var kernelDoubleValue: Double { Double(self) }
    @inlinable public init(kernelDoubleValue v: Double) { self = Float(v) }
}

extension Float16: KernelScalar {
    @inlinable public static var kernelScalarType: KernelScalarType { .float16 }
    @inlinable public var kernelDoubleValue: Double { Double(self) }
    @inlinable public init(kernelDoubleValue v: Double) { self = Float16(Float(v)) }
}

extension Double: KernelScalar {
    @inlinable public static var kernelScalarType: KernelScalarType { .float64 }
    @inlinable public var kernelDoubleValue: Double { self }
    @inlinable public init(kernelDoubleValue v: Double) { self = v }
}

extension Bool: KernelScalar {
    @inlinable public static var kernelScalarType: KernelScalarType { .bool }
    @inlinable public var kernelDoubleValue: Double { self ? 1 : 0 }
    @inlinable public init(kernelDoubleValue v: Double) { self = v != 0 }
}

/// Integer conversion from `Double`: truncate toward zero, then wrap to the width
/// (NaN and out-of-range values give 0 after wrapping through Int64's range).
@inlinable
func wrappingInteger<I: FixedWidthInteger>(_ v: Double, as _: I.Type) -> I {
    guard v.isFinite, v > -9.2e18, v < 9.2e18 else { return 0 }
    return I(truncatingIfNeeded: Int64(v.rounded(.towardZero)))
}

extension Int32: KernelScalar {
    @inlinable public static var kernelScalarType: KernelScalarType { .int32 }
    @inlinable public var kernelDoubleValue: Double { Double(self) }
    @inlinable public init(kernelDoubleValue v: Double) { self = wrappingInteger(v, as: Int32.self) }
}

extension Int8: KernelScalar {
    @inlinable public static var kernelScalarType: KernelScalarType { .int8 }
    @inlinable public var kernelDoubleValue: Double { Double(self) }
    @inlinable public init(kernelDoubleValue v: Double) { self = wrappingInteger(v, as: Int8.self) }
}

extension UInt8: KernelScalar {
    @inlinable public static var kernelScalarType: KernelScalarType { .uint8 }
    @inlinable public var kernelDoubleValue: Double { Double(self) }
    @inlinable public init(kernelDoubleValue v: Double) { self = wrappingInteger(v, as: UInt8.self) }
}

extension Int16: KernelScalar {
    @inlinable public static var kernelScalarType: KernelScalarType { .int16 }
    @inlinable public var kernelDoubleValue: Double { Double(self) }
    @inlinable public init(kernelDoubleValue v: Double) { self = wrappingInteger(v, as: Int16.self) }
}

extension UInt16: KernelScalar {
    @inlinable public static var kernelScalarType: KernelScalarType { .uint16 }
    @inlinable public var kernelDoubleValue: Double { Double(self) }
    @inlinable public init(kernelDoubleValue v: Double) { self = wrappingInteger(v, as: UInt16.self) }
}

extension UInt32: KernelScalar {
    @inlinable public static var kernelScalarType: KernelScalarType { .uint32 }
    @inlinable public var kernelDoubleValue: Double { Double(self) }
    @inlinable public init(kernelDoubleValue v: Double) { self = wrappingInteger(v, as: UInt32.self) }
}
