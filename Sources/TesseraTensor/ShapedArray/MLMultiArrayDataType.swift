import TesseraKernels

/// The element type of a multi-array, with Core ML's raw values.
///
/// Declared in the tensor module because ``MLShapedArrayScalar`` names it; the multi-array
/// module uses it for `MLMultiArray`.
public enum MLMultiArrayDataType: Int, Sendable, Hashable, CaseIterable {
    /// 64-bit floating point.
    case double = 65600
    /// 32-bit floating point.
    case float32 = 65568
    /// 16-bit floating point.
    case float16 = 65552
    /// 32-bit signed integer.
    case int32 = 131104
    /// 8-bit signed integer.
    case int8 = 131080

    /// An alias of ``double``.
    public static var float64: MLMultiArrayDataType { .double }
    /// An alias of ``float32``.
    public static var float: MLMultiArrayDataType { .float32 }

    /// The kernel layer's tag for this type.
    package var kernelScalarType: KernelScalarType {
        switch self {
        case .double: return .float64
        case .float32: return .float32
        case .float16: return .float16
        case .int32: return .int32
        case .int8: return .int8
        }
    }
}

/// A scalar type an `MLShapedArray` can hold: `Double`, `Float`, `Float16`, `Int32`, `Int8`.
public protocol MLShapedArrayScalar: KernelScalar {
    /// The multi-array data type with the same representation.
    static var multiArrayDataType: MLMultiArrayDataType { get }
}

extension Double: MLShapedArrayScalar {
    public static var multiArrayDataType: MLMultiArrayDataType { .double }
}
extension Float: MLShapedArrayScalar {
    public static var multiArrayDataType: MLMultiArrayDataType { .float32 }
}
extension Float16: MLShapedArrayScalar {
    public static var multiArrayDataType: MLMultiArrayDataType { .float16 }
}
extension Int32: MLShapedArrayScalar {
    public static var multiArrayDataType: MLMultiArrayDataType { .int32 }
}
extension Int8: MLShapedArrayScalar {
    public static var multiArrayDataType: MLMultiArrayDataType { .int8 }
}
