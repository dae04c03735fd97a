import TesseraKernels

/// A type that represents the tensor scalar types supported by the framework.
///
/// `Float`, `Float16`, `Int8`, `Int16`, `Int32`, `UInt8`, `UInt16`, `UInt32` and `Bool`
/// conform, as in Core ML. **Tessera extension:** `Double` conforms too (Core ML's does not),
/// so float64 data can be computed on without a cast.
///
/// Don't conform your own types: the requirements come from the kernel layer.
public protocol MLTensorScalar: KernelScalar {}

extension Float: MLTensorScalar {}
extension Float16: MLTensorScalar {}
extension Int8: MLTensorScalar {}
extension Int16: MLTensorScalar {}
extension Int32: MLTensorScalar {}
extension UInt8: MLTensorScalar {}
extension UInt16: MLTensorScalar {}
extension UInt32: MLTensorScalar {}
extension Bool: MLTensorScalar {}
extension Double: MLTensorScalar {}

extension KernelScalarType {
    /// The Swift type for this tag.
    package var tensorScalarType: any MLTensorScalar.Type {
        switch self {
        case .float32: return Float.self
        case .float16: return Float16.self
        case .float64: return Double.self
        case .int32: return Int32.self
        case .int8: return Int8.self
        case .uint8: return UInt8.self
        case .int16: return Int16.self
        case .uint16: return UInt16.self
        case .uint32: return UInt32.self
        case .bool: return Bool.self
        }
    }
}
