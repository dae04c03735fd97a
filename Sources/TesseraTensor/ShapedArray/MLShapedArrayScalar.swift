import TesseraKernels

/// A scalar type a shaped array can hold: `Double`, `Float`, `Float16`, `Int32` or `Int8`.
///
/// Each type names the ``MLMultiArrayDataType`` with the same representation.
///
/// ```swift
/// Float.multiArrayDataType      // .float32
/// Int8.multiArrayDataType       // .int8
/// ```
///
/// Tessera refines this protocol with the kernel layer's `KernelScalar` (so shaped arrays hand
/// their memory to kernels without a type switch) and with `Codable`; don't conform your own
/// types.
public protocol MLShapedArrayScalar: KernelScalar, Codable, Equatable {
    /// The multi-array data type whose elements have this type's representation.
    static var multiArrayDataType: MLMultiArrayDataType { get }
}

extension Double: MLShapedArrayScalar {
    /// `.double`.
    public static var multiArrayDataType: MLMultiArrayDataType { .double }
}

extension Float: MLShapedArrayScalar {
    /// `.float32`.
    public static var multiArrayDataType: MLMultiArrayDataType { .float32 }
}

extension Float16: MLShapedArrayScalar {
    /// `.float16`.
    public static var multiArrayDataType: MLMultiArrayDataType { .float16 }
}

extension Int32: MLShapedArrayScalar {
    /// `.int32`.
    public static var multiArrayDataType: MLMultiArrayDataType { .int32 }
}

extension Int8: MLShapedArrayScalar {
    /// `.int8`.
    public static var multiArrayDataType: MLMultiArrayDataType { .int8 }
}
