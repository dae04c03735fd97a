import TesseraProtobuf

extension CoreMLSpec.FeatureType {
    /// Decodes `FeatureType { oneof Type { int64Type = 1; doubleType = 2; stringType = 3;
    /// imageType = 4; multiArrayType = 5; dictionaryType = 6; sequenceType = 7; stateType = 8 };
    /// isOptional = 1000 }`.
    init(from reader: inout ProtobufReader) throws {
        self = try decodingMessage("FeatureType") {
            var kind: Kind?
            var isOptional = false
            while let tag = try reader.nextField() {
                switch tag.fieldNumber {
                case 1, 2, 3:
                    try reader.skipField()
                    kind = tag.fieldNumber == 1 ? .int64 : tag.fieldNumber == 2 ? .double : .string
                case 4:
                    var child = try reader.readMessage()
                    kind = .image(try CoreMLSpec.ImageFeatureType(from: &child))
                case 5:
                    var child = try reader.readMessage()
                    kind = .multiArray(try CoreMLSpec.ArrayFeatureType(from: &child))
                case 6:
                    var child = try reader.readMessage()
                    kind = .dictionary(keyType: try Self.decodeDictionaryKey(&child))
                case 7:
                    var child = try reader.readMessage()
                    kind = .sequence(try CoreMLSpec.SequenceFeatureType(from: &child))
                case 8:
                    var child = try reader.readMessage()
                    kind = .state(try Self.decodeState(&child))
                case 1000: isOptional = try reader.readBool()
                default: try reader.skipField()
                }
            }
            guard let kind else { throw reader.invalid("a feature type sets no type") }
            return CoreMLSpec.FeatureType(kind: kind, isOptional: isOptional)
        }
    }

    /// Decodes `DictionaryFeatureType { oneof KeyType { int64KeyType = 1; stringKeyType = 2 } }`.
    static func decodeDictionaryKey(_ reader: inout ProtobufReader) throws -> CoreMLSpec.DictionaryKeyType {
        try decodingMessage("DictionaryFeatureType") {
            var key: CoreMLSpec.DictionaryKeyType?
            while let tag = try reader.nextField() {
                switch tag.fieldNumber {
                case 1: key = .int64
                case 2: key = .string
                default: break
                }
                try reader.skipField()
            }
            guard let key else { throw reader.invalid("a dictionary type sets no key type") }
            return key
        }
    }

    /// Decodes `StateFeatureType { oneof Type { ArrayFeatureType arrayType = 1 } }`.
    static func decodeState(_ reader: inout ProtobufReader) throws -> CoreMLSpec.ArrayFeatureType {
        try decodingMessage("StateFeatureType") {
            var array: CoreMLSpec.ArrayFeatureType?
            while let tag = try reader.nextField() {
                if tag.fieldNumber == 1 {
                    var child = try reader.readMessage()
                    array = try CoreMLSpec.ArrayFeatureType(from: &child)
                } else {
                    try reader.skipField()
                }
            }
            guard let array else { throw reader.invalid("a state type has no array type") }
            return array
        }
    }
}

extension CoreMLSpec.ArrayFeatureType {
    /// Decodes `ArrayFeatureType { shape = 1; dataType = 2; enumeratedShapes = 21;
    /// shapeRange = 31; intDefaultValue = 41; floatDefaultValue = 51; doubleDefaultValue = 61 }`.
    init(from reader: inout ProtobufReader) throws {
        self = try decodingMessage("ArrayFeatureType") {
            var array = CoreMLSpec.ArrayFeatureType()
            var shape: [Int64] = []
            while let tag = try reader.nextField() {
                switch tag.fieldNumber {
                case 1: try reader.readRepeatedInt64(into: &shape)
                case 2:
                    let raw = try reader.readEnum()
                    if raw != 0 {
                        guard let type = CoreMLSpec.ArrayDataType(rawValue: raw) else {
                            throw reader.invalid("unknown multi-array data type \(raw)")
                        }
                        array.dataType = type
                    }
                case 21:
                    var child = try reader.readMessage()
                    array.shapeFlexibility = .enumerated(try Self.decodeEnumeratedShapes(&child))
                case 31:
                    var child = try reader.readMessage()
                    array.shapeFlexibility = .range(try Self.decodeShapeRange(&child))
                case 41: array.defaultValue = .int(try reader.readInt32())
                case 51: array.defaultValue = .float(try reader.readFloat())
                case 61: array.defaultValue = .double(try reader.readDouble())
                default: try reader.skipField()
                }
            }
            array.shape = try Self.checkedShape(shape, reader: reader)
            return array
        }
    }

    /// Converts a shape to `Int`s, rejecting negative or absurd sizes.
    static func checkedShape(_ shape: [Int64], reader: ProtobufReader) throws -> [Int] {
        try shape.map { size in
            guard size >= 0, size <= Int64(Int32.max) else {
                throw reader.invalid("shape \(shape) has an invalid size \(size)")
            }
            return Int(size)
        }
    }

    /// Decodes `EnumeratedShapes { repeated Shape shapes = 1 }`, `Shape { repeated int64 shape = 1 }`.
    static func decodeEnumeratedShapes(_ reader: inout ProtobufReader) throws -> [[Int]] {
        try decodingMessage("EnumeratedShapes") {
            var shapes: [[Int]] = []
            while let tag = try reader.nextField() {
                guard tag.fieldNumber == 1 else {
                    try reader.skipField()
                    continue
                }
                var child = try reader.readMessage()
                var shape: [Int64] = []
                while try child.nextField() != nil {
                    try child.readRepeatedOrSkip(field: 1) { try $0.readRepeatedInt64(into: &shape) }
                }
                shapes.append(try checkedShape(shape, reader: child))
            }
            return shapes
        }
    }

    /// Decodes `ShapeRange { repeated SizeRange sizeRanges = 1 }`.
    static func decodeShapeRange(_ reader: inout ProtobufReader) throws -> [CoreMLSpec.SizeRange] {
        try decodingMessage("ShapeRange") {
            var ranges: [CoreMLSpec.SizeRange] = []
            while let tag = try reader.nextField() {
                if tag.fieldNumber == 1 {
                    var child = try reader.readMessage()
                    ranges.append(try CoreMLSpec.SizeRange(from: &child))
                } else {
                    try reader.skipField()
                }
            }
            return ranges
        }
    }
}

extension CoreMLSpec.SizeRange {
    /// Decodes `SizeRange { uint64 lowerBound = 1; int64 upperBound = 2 }` (negative upper = unbounded).
    init(from reader: inout ProtobufReader) throws {
        self = try decodingMessage("SizeRange") {
            var lower: UInt64 = 0
            var upper: Int64 = 0
            while let tag = try reader.nextField() {
                switch tag.fieldNumber {
                case 1: lower = try reader.readUInt64()
                case 2: upper = try reader.readInt64()
                default: try reader.skipField()
                }
            }
            guard lower <= UInt64(Int32.max), upper <= Int64(Int32.max) else {
                throw reader.invalid("size range \(lower)...\(upper) is out of range")
            }
            let upperBound = upper < 0 ? nil : Int(upper)
            if let upperBound, upperBound < Int(lower) {
                throw reader.invalid("size range \(lower)...\(upper) is empty")
            }
            return CoreMLSpec.SizeRange(lowerBound: Int(lower), upperBound: upperBound)
        }
    }
}

extension CoreMLSpec.ImageFeatureType {
    /// Decodes `ImageFeatureType { width = 1; height = 2; colorSpace = 3; enumeratedSizes = 21;
    /// imageSizeRange = 31 }`.
    init(from reader: inout ProtobufReader) throws {
        self = try decodingMessage("ImageFeatureType") {
            var image = CoreMLSpec.ImageFeatureType()
            while let tag = try reader.nextField() {
                switch tag.fieldNumber {
                case 1: image.width = try Self.checkedSize(try reader.readInt64(), reader: reader)
                case 2: image.height = try Self.checkedSize(try reader.readInt64(), reader: reader)
                case 3:
                    let raw = try reader.readEnum()
                    guard let space = ColorSpace(rawValue: raw) else {
                        throw reader.invalid("unknown image color space \(raw)")
                    }
                    image.colorSpace = space
                case 21:
                    var child = try reader.readMessage()
                    image.sizeFlexibility = .enumerated(try Self.decodeEnumeratedSizes(&child))
                case 31:
                    var child = try reader.readMessage()
                    image.sizeFlexibility = try Self.decodeSizeRange(&child)
                default: try reader.skipField()
                }
            }
            return image
        }
    }

    /// Checks an image dimension.
    static func checkedSize(_ value: some BinaryInteger, reader: ProtobufReader) throws -> Int {
        guard value >= 0, value <= Int32.max else { throw reader.invalid("image size \(value) is out of range") }
        return Int(value)
    }

    /// Decodes `EnumeratedImageSizes { repeated ImageSize sizes = 1 }`, `ImageSize { width = 1; height = 2 }`.
    static func decodeEnumeratedSizes(_ reader: inout ProtobufReader) throws -> [(width: Int, height: Int)] {
        try decodingMessage("EnumeratedImageSizes") {
            var sizes: [(width: Int, height: Int)] = []
            while let tag = try reader.nextField() {
                guard tag.fieldNumber == 1 else {
                    try reader.skipField()
                    continue
                }
                var child = try reader.readMessage()
                var size = (width: 0, height: 0)
                while let field = try child.nextField() {
                    switch field.fieldNumber {
                    case 1: size.width = try checkedSize(try child.readUInt64(), reader: child)
                    case 2: size.height = try checkedSize(try child.readUInt64(), reader: child)
                    default: try child.skipField()
                    }
                }
                sizes.append(size)
            }
            return sizes
        }
    }

    /// Decodes `ImageSizeRange { SizeRange widthRange = 1; SizeRange heightRange = 2 }`.
    static func decodeSizeRange(_ reader: inout ProtobufReader) throws -> SizeFlexibility {
        try decodingMessage("ImageSizeRange") {
            var width = CoreMLSpec.SizeRange(lowerBound: 0, upperBound: nil)
            var height = width
            while let tag = try reader.nextField() {
                switch tag.fieldNumber {
                case 1:
                    var child = try reader.readMessage()
                    width = try CoreMLSpec.SizeRange(from: &child)
                case 2:
                    var child = try reader.readMessage()
                    height = try CoreMLSpec.SizeRange(from: &child)
                default: try reader.skipField()
                }
            }
            return .range(width: width, height: height)
        }
    }
}

extension CoreMLSpec.SequenceFeatureType {
    /// Decodes `SequenceFeatureType { int64Type = 1; stringType = 3; sizeRange = 101 }`.
    init(from reader: inout ProtobufReader) throws {
        self = try decodingMessage("SequenceFeatureType") {
            var sequence = CoreMLSpec.SequenceFeatureType()
            while let tag = try reader.nextField() {
                switch tag.fieldNumber {
                case 1:
                    sequence.element = .int64
                    try reader.skipField()
                case 3:
                    sequence.element = .string
                    try reader.skipField()
                case 101:
                    var child = try reader.readMessage()
                    sequence.sizeRange = try CoreMLSpec.SizeRange(from: &child)
                default: try reader.skipField()
                }
            }
            return sequence
        }
    }
}
