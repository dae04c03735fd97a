/// The element types of MIL tensors (`MILSpec.DataType` in `MIL.proto`).
///
/// The raw values are the protobuf enum's numbers. `weight.bin` numbers its types
/// differently; ``WeightBlobDataType`` maps between the two.
package enum MILDataType: Int32, Sendable, CaseIterable, CustomStringConvertible {
    /// Boolean (one byte per element in raw storage).
    case bool = 1
    /// UTF-8 string.
    case string = 2
    /// IEEE half precision.
    case float16 = 10
    /// IEEE single precision.
    case float32 = 11
    /// IEEE double precision.
    case float64 = 12
    /// Brain float: float32 with a 7-bit mantissa.
    case bfloat16 = 13
    /// Signed 8-bit integer.
    case int8 = 21
    /// Signed 16-bit integer.
    case int16 = 22
    /// Signed 32-bit integer.
    case int32 = 23
    /// Signed 64-bit integer.
    case int64 = 24
    /// Signed 4-bit integer, packed two per byte.
    case int4 = 25
    /// Unsigned 8-bit integer.
    case uint8 = 31
    /// Unsigned 16-bit integer.
    case uint16 = 32
    /// Unsigned 32-bit integer.
    case uint32 = 33
    /// Unsigned 64-bit integer.
    case uint64 = 34
    /// Unsigned 4-bit integer, packed two per byte.
    case uint4 = 35
    /// Unsigned 2-bit integer, packed four per byte.
    case uint2 = 36
    /// Unsigned 1-bit integer, packed eight per byte.
    case uint1 = 37
    /// Unsigned 6-bit integer, packed LSB-first across bytes.
    case uint6 = 38
    /// Unsigned 3-bit integer, packed LSB-first across bytes.
    case uint3 = 39
    /// 8-bit float with 4 exponent and 3 mantissa bits, finite only.
    case float8E4M3FN = 40
    /// 8-bit float with 5 exponent and 2 mantissa bits.
    case float8E5M2 = 41

    /// Bits per element, or `nil` for strings.
    package var bitWidth: Int? {
        switch self {
        case .string: nil
        case .uint1: 1
        case .uint2: 2
        case .uint3: 3
        case .int4, .uint4: 4
        case .uint6: 6
        case .bool, .int8, .uint8, .float8E4M3FN, .float8E5M2: 8
        case .float16, .bfloat16, .int16, .uint16: 16
        case .float32, .int32, .uint32: 32
        case .float64, .int64, .uint64: 64
        }
    }

    /// The name coremltools prints (`fp32`, `int8`, `bool`, …).
    package var description: String {
        switch self {
        case .bool: "bool"
        case .string: "string"
        case .float16: "fp16"
        case .float32: "fp32"
        case .float64: "fp64"
        case .bfloat16: "bf16"
        case .int8: "int8"
        case .int16: "int16"
        case .int32: "int32"
        case .int64: "int64"
        case .int4: "int4"
        case .uint8: "uint8"
        case .uint16: "uint16"
        case .uint32: "uint32"
        case .uint64: "uint64"
        case .uint4: "uint4"
        case .uint2: "uint2"
        case .uint1: "uint1"
        case .uint6: "uint6"
        case .uint3: "uint3"
        case .float8E4M3FN: "fp8e4m3fn"
        case .float8E5M2: "fp8e5m2"
        }
    }
}
