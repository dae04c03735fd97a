/// The element types of a MILBlob v2 `weight.bin` record (`BlobDataType` in coremltools'
/// `MILBlob/Blob/BlobDataType.hpp`).
///
/// The numbering differs from ``MILDataType``'s; ``milDataType`` maps across.
package enum WeightBlobDataType: UInt32, Sendable, CaseIterable {
    /// IEEE half precision.
    case float16 = 1
    /// IEEE single precision.
    case float32 = 2
    /// Unsigned 8-bit integer.
    case uint8 = 3
    /// Signed 8-bit integer.
    case int8 = 4
    /// Brain float.
    case bfloat16 = 5
    /// Signed 16-bit integer.
    case int16 = 6
    /// Unsigned 16-bit integer.
    case uint16 = 7
    /// Signed 4-bit integer, packed.
    case int4 = 8
    /// Unsigned 1-bit integer, packed.
    case uint1 = 9
    /// Unsigned 2-bit integer, packed.
    case uint2 = 10
    /// Unsigned 4-bit integer, packed.
    case uint4 = 11
    /// Unsigned 3-bit integer, packed.
    case uint3 = 12
    /// Unsigned 6-bit integer, packed.
    case uint6 = 13
    /// Signed 32-bit integer.
    case int32 = 14
    /// Unsigned 32-bit integer.
    case uint32 = 15
    /// 8-bit float, 4 exponent bits, 3 mantissa bits.
    case float8E4M3FN = 16
    /// 8-bit float, 5 exponent bits, 2 mantissa bits.
    case float8E5M2 = 17

    /// The MIL tensor type a blob of this type backs.
    package var milDataType: MILDataType {
        switch self {
        case .float16: .float16
        case .float32: .float32
        case .uint8: .uint8
        case .int8: .int8
        case .bfloat16: .bfloat16
        case .int16: .int16
        case .uint16: .uint16
        case .int4: .int4
        case .uint1: .uint1
        case .uint2: .uint2
        case .uint4: .uint4
        case .uint3: .uint3
        case .uint6: .uint6
        case .int32: .int32
        case .uint32: .uint32
        case .float8E4M3FN: .float8E4M3FN
        case .float8E5M2: .float8E5M2
        }
    }

    /// Bits per element.
    package var bitWidth: Int { milDataType.bitWidth ?? 8 }
}
