import TesseraKernels

/// The scalar type of a multi-array's elements, with Core ML's raw values.
///
/// The raw value is a kind flag (`0x10000` floating point, `0x20000` integer) or'ed with
/// the element width in bits, so `float32` is `0x10000 | 32 = 65568`. `float64` and `float`
/// are aliases of `double` and `float32`; Swift enums cannot repeat a raw value, so they are
/// static members rather than cases.
///
/// ```swift
/// MLMultiArrayDataType.float32.rawValue          // 65568
/// MLMultiArrayDataType(rawValue: 131104)         // .int32
/// MLMultiArrayDataType.float64 == .double        // true
/// ```
public enum MLMultiArrayDataType: Int, Sendable {
    /// 64-bit IEEE floating point (`Double`).
    case double = 65600
    /// 32-bit IEEE floating point (`Float`).
    case float32 = 65568
    /// 16-bit IEEE floating point (`Float16`).
    case float16 = 65552
    /// 32-bit signed integer (`Int32`).
    case int32 = 131104
    /// 8-bit signed integer (`Int8`).
    case int8 = 131080

    /// 64-bit floating point; the same value as ``double``.
    public static let float64: MLMultiArrayDataType = .double
    /// 32-bit floating point; the same value as ``float32``.
    public static let float: MLMultiArrayDataType = .float32
}

extension MLMultiArrayDataType {
    /// The kernel layer's tag for this data type. **Tessera extension.**
    package var kernelScalarType: KernelScalarType {
        switch self {
        case .double: return .float64
        case .float32: return .float32
        case .float16: return .float16
        case .int32: return .int32
        case .int8: return .int8
        }
    }

    /// The size of one element in bytes. **Tessera extension.**
    package var byteCount: Int { kernelScalarType.byteCount }
}
