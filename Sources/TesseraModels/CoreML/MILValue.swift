/// A MIL literal (`MILSpec.Value`): an immediate value stored in the program, or a
/// reference to a blob in a weight file.
package struct MILValue: Sendable, Equatable {
    /// Where the value's data lives.
    package enum Storage: Sendable, Equatable {
        /// Data stored inline in the protobuf.
        case immediate(MILImmediateValue)
        /// Data stored in a `weight.bin` file.
        case blobFile(MILBlobReference)
        /// Neither is set (a type-only value).
        case none
    }

    /// Documentation the writer attached; usually empty.
    package var docString: String
    /// The value's type; `nil` when the writer left it out.
    package var type: MILValueType?
    /// The value's data.
    package var storage: Storage

    /// Creates a value.
    package init(docString: String = "", type: MILValueType?, storage: Storage) {
        self.docString = docString
        self.type = type
        self.storage = storage
    }

    /// The tensor data, when the value is an immediate tensor.
    package var tensor: MILTensorStorage? {
        if case .immediate(.tensor(let tensor)) = storage { return tensor }
        return nil
    }

    /// The blob reference, when the value lives in a weight file.
    package var blobReference: MILBlobReference? {
        if case .blobFile(let reference) = storage { return reference }
        return nil
    }

    /// The string, when the value is an immediate scalar string (e.g. a const's `name`).
    package var stringScalar: String? {
        if case .strings(let strings) = tensor, strings.count == 1 { return strings[0] }
        return nil
    }
}

/// A value stored inline in a MIL program (`MILSpec.Value.ImmediateValue`).
package enum MILImmediateValue: Sendable, Equatable {
    /// A tensor's elements.
    case tensor(MILTensorStorage)
    /// A tuple's elements.
    case tuple([MILValue])
    /// A list's elements.
    case list([MILValue])
    /// A dictionary's entries, in file order.
    case dictionary([MILDictionaryEntry])
}

/// One entry of an immediate MIL dictionary.
package struct MILDictionaryEntry: Sendable, Equatable {
    /// The key.
    package var key: MILValue
    /// The value.
    package var value: MILValue
}

/// The elements of an immediate tensor (`MILSpec.TensorValue`), in the protobuf field the
/// writer chose for its data type.
///
/// coremltools stores fp32 in `floats`, fp64 in `doubles`, bool in `bools`, int32/int16/
/// uint16 in `ints`, int64/uint64 in `longInts`, strings in `strings`, and fp16, int8,
/// uint8, uint32 and the sub-byte types as raw little-endian `bytes`.
package enum MILTensorStorage: Sendable, Equatable {
    /// fp32 elements.
    case floats([Float])
    /// int32, int16 and uint16 elements.
    case ints([Int32])
    /// bool elements.
    case bools([Bool])
    /// string elements.
    case strings([String])
    /// int64 and uint64 elements (uint64 as its bit pattern).
    case longInts([Int64])
    /// fp64 elements.
    case doubles([Double])
    /// Raw little-endian elements of fp16, int8, uint8, uint32 and the sub-byte types.
    case bytes([UInt8])
    /// No field of the oneof was set.
    case empty

    /// The number of stored items (bytes for `bytes`).
    package var count: Int {
        switch self {
        case .floats(let values): values.count
        case .ints(let values): values.count
        case .bools(let values): values.count
        case .strings(let values): values.count
        case .longInts(let values): values.count
        case .doubles(let values): values.count
        case .bytes(let values): values.count
        case .empty: 0
        }
    }
}

/// Where a constant's data lives in a weight file (`MILSpec.Value.BlobFileValue`).
package struct MILBlobReference: Sendable, Hashable {
    /// The file, usually `@model_path/weights/weight.bin`.
    package var fileName: String
    /// The byte offset of the blob's 64-byte metadata record (not of the data).
    package var offset: UInt64
}
