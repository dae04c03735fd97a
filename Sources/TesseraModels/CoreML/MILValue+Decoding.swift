import TesseraProtobuf

extension MILValue {
    /// Decodes a `MILSpec.Value` message and checks an immediate tensor's element count
    /// against its declared type.
    init(from reader: inout ProtobufReader) throws {
        self = try decodingMessage("Value") {
            var docString = ""
            var type: MILValueType?
            var storage = Storage.none
            var storageOffset = reader.offset
            while let tag = try reader.nextField() {
                switch tag.fieldNumber {
                case 1: docString = try reader.readString()
                case 2:
                    var child = try reader.readMessage()
                    type = try MILValueType(from: &child)
                case 3:
                    storageOffset = reader.offset
                    var child = try reader.readMessage()
                    storage = .immediate(try MILImmediateValue(from: &child))
                case 5:
                    var child = try reader.readMessage()
                    storage = .blobFile(try MILBlobReference(from: &child))
                default: try reader.skipField()
                }
            }
            if case .tensor(let tensorType) = type, case .immediate(.tensor(let tensor)) = storage {
                try Self.checkCount(of: tensor, against: tensorType, offset: storageOffset)
            }
            return MILValue(docString: docString, type: type, storage: storage)
        }
    }

    /// Throws unless an immediate tensor holds exactly the elements its type declares, so
    /// later stages can index it without further checks.
    static func checkCount(of tensor: MILTensorStorage, against type: MILTensorType, offset: Int) throws {
        guard let elementCount = type.elementCount else { return }
        let expected: Int
        if case .bytes = tensor {
            // Raw little-endian elements; sub-byte types are packed LSB-first.
            guard let bits = type.dataType.bitWidth else {
                throw ModelFormatError(
                    .invalidSpecification, "a \(type) value is stored as raw bytes at byte \(offset)")
            }
            let (totalBits, overflow) = elementCount.multipliedReportingOverflow(by: bits)
            guard !overflow else {
                throw ModelFormatError(.invalidSpecification, "a \(type) value is too large at byte \(offset)")
            }
            expected = (totalBits + 7) / 8
        } else {
            expected = elementCount
        }
        guard tensor.count == expected else {
            let unit = if case .bytes = tensor { "bytes" } else { "elements" }
            throw ModelFormatError(
                .invalidSpecification,
                "a \(type) value holds \(tensor.count) \(unit) instead of \(expected) at byte \(offset)")
        }
    }
}

extension MILImmediateValue {
    /// Decodes a `MILSpec.Value.ImmediateValue` message.
    init(from reader: inout ProtobufReader) throws {
        self = try decodingMessage("ImmediateValue") {
            var value = MILImmediateValue.tensor(.empty)
            while let tag = try reader.nextField() {
                switch tag.fieldNumber {
                case 1:
                    var child = try reader.readMessage()
                    value = .tensor(try MILTensorStorage(from: &child))
                case 2:
                    var child = try reader.readMessage()
                    value = .tuple(try Self.readValues(&child))
                case 3:
                    var child = try reader.readMessage()
                    value = .list(try Self.readValues(&child))
                case 4:
                    var child = try reader.readMessage()
                    value = .dictionary(try Self.readEntries(&child))
                default: try reader.skipField()
                }
            }
            return value
        }
    }

    /// The `values = 1` field of `TupleValue` / `ListValue`.
    static func readValues(_ reader: inout ProtobufReader) throws -> [MILValue] {
        var values: [MILValue] = []
        while let tag = try reader.nextField() {
            if tag.fieldNumber == 1 {
                var child = try reader.readMessage()
                values.append(try MILValue(from: &child))
            } else {
                try reader.skipField()
            }
        }
        return values
    }

    /// The `values = 1` field of `DictionaryValue`: `KeyValuePair { key = 1; value = 2 }`.
    static func readEntries(_ reader: inout ProtobufReader) throws -> [MILDictionaryEntry] {
        var entries: [MILDictionaryEntry] = []
        while let tag = try reader.nextField() {
            guard tag.fieldNumber == 1 else {
                try reader.skipField()
                continue
            }
            var pair = try reader.readMessage()
            var key = MILValue(type: nil, storage: .none)
            var value = MILValue(type: nil, storage: .none)
            while let field = try pair.nextField() {
                switch field.fieldNumber {
                case 1:
                    var child = try pair.readMessage()
                    key = try MILValue(from: &child)
                case 2:
                    var child = try pair.readMessage()
                    value = try MILValue(from: &child)
                default: try pair.skipField()
                }
            }
            entries.append(MILDictionaryEntry(key: key, value: value))
        }
        return entries
    }
}

extension MILTensorStorage {
    /// Decodes a `MILSpec.TensorValue` message: one of seven wrappers, each with `values = 1`.
    init(from reader: inout ProtobufReader) throws {
        self = try decodingMessage("TensorValue") {
            var storage = MILTensorStorage.empty
            while let tag = try reader.nextField() {
                guard (1...7).contains(tag.fieldNumber) else {
                    try reader.skipField()
                    continue
                }
                var wrapper = try reader.readMessage()
                switch tag.fieldNumber {
                case 1:
                    var values: [Float] = []
                    while try wrapper.nextField() != nil {
                        try wrapper.readRepeatedOrSkip(field: 1) { try $0.readRepeatedFloat(into: &values) }
                    }
                    storage = .floats(values)
                case 2:
                    var values: [Int32] = []
                    while try wrapper.nextField() != nil {
                        try wrapper.readRepeatedOrSkip(field: 1) { try $0.readRepeatedInt32(into: &values) }
                    }
                    storage = .ints(values)
                case 3:
                    var values: [Bool] = []
                    while try wrapper.nextField() != nil {
                        try wrapper.readRepeatedOrSkip(field: 1) { try $0.readRepeatedBool(into: &values) }
                    }
                    storage = .bools(values)
                case 4:
                    var values: [String] = []
                    while try wrapper.nextField() != nil {
                        try wrapper.readRepeatedOrSkip(field: 1) { values.append(try $0.readString()) }
                    }
                    storage = .strings(values)
                case 5:
                    var values: [Int64] = []
                    while try wrapper.nextField() != nil {
                        try wrapper.readRepeatedOrSkip(field: 1) { try $0.readRepeatedInt64(into: &values) }
                    }
                    storage = .longInts(values)
                case 6:
                    var values: [Double] = []
                    while try wrapper.nextField() != nil {
                        try wrapper.readRepeatedOrSkip(field: 1) { try $0.readRepeatedDouble(into: &values) }
                    }
                    storage = .doubles(values)
                default:
                    var values: [UInt8] = []
                    while try wrapper.nextField() != nil {
                        try wrapper.readRepeatedOrSkip(field: 1) { values = try $0.readBytes() }
                    }
                    storage = .bytes(values)
                }
            }
            return storage
        }
    }
}

extension ProtobufReader {
    /// Runs `read` when the current field is `field`, and skips it otherwise.
    mutating func readRepeatedOrSkip(field: Int, _ read: (inout ProtobufReader) throws -> Void) throws {
        if tag?.fieldNumber == field {
            try read(&self)
        } else {
            try skipField()
        }
    }
}

extension MILBlobReference {
    /// Decodes a `MILSpec.Value.BlobFileValue` message (`fileName = 1`, `offset = 2`).
    init(from reader: inout ProtobufReader) throws {
        self = try decodingMessage("BlobFileValue") {
            var fileName = ""
            var offset: UInt64 = 0
            while let tag = try reader.nextField() {
                switch tag.fieldNumber {
                case 1: fileName = try reader.readString()
                case 2: offset = try reader.readUInt64()
                default: try reader.skipField()
                }
            }
            return MILBlobReference(fileName: fileName, offset: offset)
        }
    }
}
