import TesseraProtobuf

extension MILValueType {
    /// Decodes a `MILSpec.ValueType` message (a oneof of five type kinds).
    init(from reader: inout ProtobufReader) throws {
        self = try decodingMessage("ValueType") {
            var type: MILValueType?
            while let tag = try reader.nextField() {
                switch tag.fieldNumber {
                case 1:
                    var child = try reader.readMessage()
                    type = .tensor(try MILTensorType(from: &child))
                case 2:
                    var child = try reader.readMessage()
                    type = try Self.decodeList(&child)
                case 3:
                    var child = try reader.readMessage()
                    type = try decodingMessage("TupleType") {
                        var types: [MILValueType] = []
                        while let field = try child.nextField() {
                            if field.fieldNumber == 1 {
                                var element = try child.readMessage()
                                types.append(try MILValueType(from: &element))
                            } else {
                                try child.skipField()
                            }
                        }
                        return .tuple(types)
                    }
                case 4:
                    var child = try reader.readMessage()
                    type = try Self.decodeDictionary(&child)
                case 5:
                    var child = try reader.readMessage()
                    type = try decodingMessage("StateType") {
                        var wrapped: MILValueType?
                        while let field = try child.nextField() {
                            if field.fieldNumber == 1 {
                                var inner = try child.readMessage()
                                wrapped = try MILValueType(from: &inner)
                            } else {
                                try child.skipField()
                            }
                        }
                        guard let wrapped else { throw child.invalid("a state type has no wrapped type") }
                        return .state(wrapped)
                    }
                default: try reader.skipField()
                }
            }
            guard let type else {
                throw reader.invalid("a value type sets none of tensor, list, tuple, dictionary, state")
            }
            return type
        }
    }

    /// Decodes `ListType { type = 1; length = 2 }`.
    static func decodeList(_ reader: inout ProtobufReader) throws -> MILValueType {
        try decodingMessage("ListType") {
            var element: MILValueType?
            var length: MILDimension?
            while let tag = try reader.nextField() {
                switch tag.fieldNumber {
                case 1:
                    var child = try reader.readMessage()
                    element = try MILValueType(from: &child)
                case 2:
                    var child = try reader.readMessage()
                    length = try MILDimension(from: &child)
                default: try reader.skipField()
                }
            }
            guard let element else { throw reader.invalid("a list type has no element type") }
            return .list(element: element, length: length)
        }
    }

    /// Decodes `DictionaryType { keyType = 1; valueType = 2 }`.
    static func decodeDictionary(_ reader: inout ProtobufReader) throws -> MILValueType {
        try decodingMessage("DictionaryType") {
            var key: MILValueType?
            var value: MILValueType?
            while let tag = try reader.nextField() {
                switch tag.fieldNumber {
                case 1:
                    var child = try reader.readMessage()
                    key = try MILValueType(from: &child)
                case 2:
                    var child = try reader.readMessage()
                    value = try MILValueType(from: &child)
                default: try reader.skipField()
                }
            }
            guard let key, let value else { throw reader.invalid("a dictionary type lacks its key or value type") }
            return .dictionary(key: key, value: value)
        }
    }
}

extension MILTensorType {
    /// Decodes `TensorType { dataType = 1; rank = 2; dimensions = 3; attributes = 4 }` and
    /// checks that the rank and the dimensions agree.
    init(from reader: inout ProtobufReader) throws {
        self = try decodingMessage("TensorType") {
            var rawType: Int32 = 0
            var typeOffset = reader.offset
            var rank: Int64 = 0
            var dimensions: [MILDimension] = []
            var attributes: [String: MILValue] = [:]
            while let tag = try reader.nextField() {
                switch tag.fieldNumber {
                case 1:
                    typeOffset = reader.offset
                    rawType = try reader.readEnum()
                case 2: rank = try reader.readInt64()
                case 3:
                    var child = try reader.readMessage()
                    dimensions.append(try MILDimension(from: &child))
                case 4:
                    let entry = try reader.readMapEntry(default: MILValue(type: nil, storage: .none)) {
                        var child = try $0.readMessage()
                        return try MILValue(from: &child)
                    }
                    attributes[entry.key] = entry.value
                default: try reader.skipField()
                }
            }
            guard let dataType = MILDataType(rawValue: rawType) else {
                throw ModelFormatError(.invalidSpecification, "unknown MIL data type \(rawType) at byte \(typeOffset)")
            }
            guard rank >= -1, rank <= 64 else {
                throw ModelFormatError(
                    .invalidSpecification, "tensor rank \(rank) is out of range at byte \(typeOffset)")
            }
            guard rank == -1 || dimensions.count == Int(rank) else {
                throw ModelFormatError(
                    .invalidSpecification,
                    "a rank-\(rank) tensor type lists \(dimensions.count) dimensions at byte \(typeOffset)")
            }
            return MILTensorType(dataType: dataType, rank: Int(rank), dimensions: dimensions, attributes: attributes)
        }
    }
}

extension MILDimension {
    /// Decodes `Dimension { oneof { ConstantDimension constant = 1; UnknownDimension unknown = 2 } }`.
    init(from reader: inout ProtobufReader) throws {
        self = try decodingMessage("Dimension") {
            var dimension = MILDimension.unknown(variadic: false)
            while let tag = try reader.nextField() {
                switch tag.fieldNumber {
                case 1, 2:
                    var child = try reader.readMessage()
                    var value: UInt64 = 0
                    while let field = try child.nextField() {
                        if field.fieldNumber == 1 { value = try child.readUInt64() } else { try child.skipField() }
                    }
                    if tag.fieldNumber == 1 {
                        guard value <= UInt64(Int32.max) else {
                            throw reader.invalid("dimension size \(value) is too large")
                        }
                        dimension = .constant(Int(value))
                    } else {
                        dimension = .unknown(variadic: value != 0)
                    }
                default: try reader.skipField()
                }
            }
            return dimension
        }
    }
}

extension MILNamedValueType {
    /// Decodes `NamedValueType { name = 1; type = 2 }`.
    init(from reader: inout ProtobufReader) throws {
        self = try decodingMessage("NamedValueType") {
            var name = ""
            var type: MILValueType?
            while let tag = try reader.nextField() {
                switch tag.fieldNumber {
                case 1: name = try reader.readString()
                case 2:
                    var child = try reader.readMessage()
                    type = try MILValueType(from: &child)
                default: try reader.skipField()
                }
            }
            guard let type else { throw reader.invalid("\"\(name)\" has no type") }
            return MILNamedValueType(name: name, type: type)
        }
    }
}
