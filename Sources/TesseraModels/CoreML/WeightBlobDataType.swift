/// The element types of a MILBlob v2 `weight.bin` record (`BlobDataType` in coremltools'
/// `MILBlob/Blob/BlobDataType.hpp`).
///
/// The numbering differs from ``MILDataType``'s; ``milDataType`` maps across.
package enum WeightBlobDataType: UInt32, Sendable, CaseIterable {
    case float16 = 1
    case float32 = 2
    case uint8 = 3
    case int8 = 4
    case bfloat16 = 5
    case int16 = 6
    case uint16 = 7
    case int4 = 8
    case uint1 = 9
    case uint2 = 10
    case uint4 = 11
    case uint3 = 12
    case uint6 = 13
    case int32 = 14
    case uint32 = 15
    case float8E4M3FN = 16
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
