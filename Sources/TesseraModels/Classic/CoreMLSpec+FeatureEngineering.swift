import TesseraProtobuf

extension CoreMLSpec {
    /// `OneHotEncoder`: categories, dense or sparse output, and what an unknown value does.
    package struct OneHotEncoder: Sendable, Equatable {
        package var categories: ClassLabels = .strings([])
        package var outputSparse = false
        /// `HandleUnknown`: 0 error, 1 ignore (all zeros).
        package var ignoreUnknown = false

        /// An empty model, filled in by the decoder.
        init() {}

        /// Decodes `OneHotEncoder { stringCategories = 1; int64Categories = 2; outputSparse = 10;
        /// handleUnknown = 11 }`.
        init(from reader: inout ProtobufReader) throws {
            self = try decodingMessage("OneHotEncoder") {
                var model = OneHotEncoder()
                while let tag = try reader.nextField() {
                    switch tag.fieldNumber {
                    case 1: model.categories = .strings(try reader.readStringVector())
                    case 2: model.categories = .int64s(try reader.readInt64Vector())
                    case 10: model.outputSparse = try reader.readBool()
                    case 11: model.ignoreUnknown = try reader.readEnum() == 1
                    default: try reader.skipField()
                    }
                }
                return model
            }
        }
    }

    /// One `FeatureVectorizer.InputColumn`.
    package struct FeatureVectorizerColumn: Sendable, Equatable {
        package var name = ""
        package var dimensions: UInt64 = 0
    }

    /// A value of one of the scalar or collection kinds `Imputer` uses.
    package enum ImputerValue: Sendable, Equatable {
        case double(Double)
        case int64(Int64)
        case string(String)
        case doubles([Double])
        case int64s([Int64])
        case stringDictionary([String: Double])
        case int64Dictionary([Int64: Double])
    }

    /// `Imputer`: the value put in place of a missing one, and what counts as missing.
    package struct Imputer: Sendable, Equatable {
        package var imputed: ImputerValue?
        /// The value that marks a missing entry; `nil` means NaN (for doubles).
        package var replace: ImputerValue?

        /// An empty model, filled in by the decoder.
        init() {}

        /// Decodes `Imputer { imputedDoubleValue = 1; imputedInt64Value = 2; imputedStringValue =
        /// 3; imputedDoubleArray = 4; imputedInt64Array = 5; imputedStringDictionary = 6;
        /// imputedInt64Dictionary = 7; replaceDoubleValue = 11; replaceInt64Value = 12;
        /// replaceStringValue = 13 }`.
        init(from reader: inout ProtobufReader) throws {
            self = try decodingMessage("Imputer") {
                var model = Imputer()
                while let tag = try reader.nextField() {
                    switch tag.fieldNumber {
                    case 1: model.imputed = .double(try reader.readDouble())
                    case 2: model.imputed = .int64(try reader.readInt64())
                    case 3: model.imputed = .string(try reader.readString())
                    case 4: model.imputed = .doubles(try reader.readDoubles("DoubleVector"))
                    case 5: model.imputed = .int64s(try reader.readInt64Vector())
                    case 6:
                        let entries = try reader.readMap(
                            "StringToDoubleMap", key: { try $0.readString() }, value: { try $0.readDouble() },
                            defaults: ("", 0))
                        model.imputed = .stringDictionary(Dictionary(entries, uniquingKeysWith: { _, last in last }))
                    case 7:
                        let entries = try reader.readMap(
                            "Int64ToDoubleMap", key: { try $0.readInt64() }, value: { try $0.readDouble() },
                            defaults: (0, 0))
                        model.imputed = .int64Dictionary(Dictionary(entries, uniquingKeysWith: { _, last in last }))
                    case 11: model.replace = .double(try reader.readDouble())
                    case 12: model.replace = .int64(try reader.readInt64())
                    case 13: model.replace = .string(try reader.readString())
                    default: try reader.skipField()
                    }
                }
                return model
            }
        }
    }

    /// `Scaler`: `y = (x + shift) · scale` element-wise.
    package struct Scaler: Sendable, Equatable {
        package var shift: [Double] = []
        package var scale: [Double] = []

        /// An empty model, filled in by the decoder.
        init() {}

        /// Decodes `Scaler { shiftValue = 1; scaleValue = 2 }`.
        init(from reader: inout ProtobufReader) throws {
            self = try decodingMessage("Scaler") {
                var model = Scaler()
                while let tag = try reader.nextField() {
                    switch tag.fieldNumber {
                    case 1: try reader.readRepeatedDouble(into: &model.shift)
                    case 2: try reader.readRepeatedDouble(into: &model.scale)
                    default: try reader.skipField()
                    }
                }
                return model
            }
        }
    }

    /// `Normalizer.NormType`.
    package enum NormType: Int32, Sendable, Equatable {
        /// The largest absolute value (`LMax = 0`).
        case lMax = 0
        /// The sum of absolute values (`L1 = 1`).
        case l1 = 1
        /// The Euclidean norm (`L2 = 2`).
        case l2 = 2
    }

    /// `CategoricalMapping`: a string → int64 or int64 → string table and the value for
    /// keys not in it.
    package struct CategoricalMapping: Sendable, Equatable {
        package var stringToInt64: [String: Int64]?
        package var int64ToString: [Int64: String]?
        package var defaultString: String?
        package var defaultInt64: Int64?

        /// An empty model, filled in by the decoder.
        init() {}

        /// Decodes `CategoricalMapping { stringToInt64Map = 1; int64ToStringMap = 2; strValue =
        /// 101; int64Value = 102 }`.
        init(from reader: inout ProtobufReader) throws {
            self = try decodingMessage("CategoricalMapping") {
                var model = CategoricalMapping()
                while let tag = try reader.nextField() {
                    switch tag.fieldNumber {
                    case 1:
                        let entries = try reader.readMap(
                            "StringToInt64Map", key: { try $0.readString() }, value: { try $0.readInt64() },
                            defaults: ("", 0))
                        model.stringToInt64 = Dictionary(entries, uniquingKeysWith: { _, last in last })
                    case 2:
                        let entries = try reader.readMap(
                            "Int64ToStringMap", key: { try $0.readInt64() }, value: { try $0.readString() },
                            defaults: (0, ""))
                        model.int64ToString = Dictionary(entries, uniquingKeysWith: { _, last in last })
                    case 101: model.defaultString = try reader.readString()
                    case 102: model.defaultInt64 = try reader.readInt64()
                    default: try reader.skipField()
                    }
                }
                return model
            }
        }
    }
}

extension ProtobufReader {
    /// Decodes `FeatureVectorizer { repeated InputColumn inputList = 1 { inputColumn = 1;
    /// inputDimensions = 2 } }` (the reader is at the model's message).
    mutating func readFeatureVectorizer() throws -> [CoreMLSpec.FeatureVectorizerColumn] {
        try decodingMessage("FeatureVectorizer") {
            var columns: [CoreMLSpec.FeatureVectorizerColumn] = []
            while let tag = try nextField() {
                guard tag.fieldNumber == 1 else {
                    try skipField()
                    continue
                }
                var child = try readMessage()
                var column = CoreMLSpec.FeatureVectorizerColumn()
                while let field = try child.nextField() {
                    switch field.fieldNumber {
                    case 1: column.name = try child.readString()
                    case 2: column.dimensions = try child.readUInt64()
                    default: try child.skipField()
                    }
                }
                columns.append(column)
            }
            return columns
        }
    }

    /// Decodes `DictVectorizer { stringToIndex = 1; int64ToIndex = 2 }`.
    mutating func readDictVectorizer() throws -> CoreMLSpec.ClassLabels {
        try decodingMessage("DictVectorizer") {
            var keys = CoreMLSpec.ClassLabels.strings([])
            while let tag = try nextField() {
                switch tag.fieldNumber {
                case 1: keys = .strings(try readStringVector())
                case 2: keys = .int64s(try readInt64Vector())
                default: try skipField()
                }
            }
            return keys
        }
    }

    /// Decodes `Normalizer { normType = 1 }`.
    mutating func readNormalizer() throws -> CoreMLSpec.NormType {
        try decodingMessage("Normalizer") {
            var norm = CoreMLSpec.NormType.lMax
            while let tag = try nextField() {
                if tag.fieldNumber == 1 {
                    let raw = try readEnum()
                    guard let value = CoreMLSpec.NormType(rawValue: raw) else {
                        throw invalid("normalizer: unknown normType \(raw)")
                    }
                    norm = value
                } else {
                    try skipField()
                }
            }
            return norm
        }
    }

    /// Decodes `ArrayFeatureExtractor { repeated uint64 extractIndex = 1 }`.
    mutating func readArrayFeatureExtractor() throws -> [Int64] {
        try decodingMessage("ArrayFeatureExtractor") {
            var indices: [UInt64] = []
            while let tag = try nextField() {
                if tag.fieldNumber == 1 { try readRepeatedUInt64(into: &indices) } else { try skipField() }
            }
            return indices.map { Int64(clamping: $0) }
        }
    }
}
