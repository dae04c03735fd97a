import TesseraProtobuf

// Readers for `DataStructures.proto`'s vectors and maps, which the classic models share.

extension ProtobufReader {
    /// Decodes the current field as `StringVector { repeated string vector = 1 }`.
    mutating func readStringVector() throws -> [String] {
        var reader = try readMessage()
        return try decodingMessage("StringVector") {
            var values: [String] = []
            while let tag = try reader.nextField() {
                if tag.fieldNumber == 1 { values.append(try reader.readString()) } else { try reader.skipField() }
            }
            return values
        }
    }

    /// Decodes the current field as `Int64Vector { repeated int64 vector = 1 }`.
    mutating func readInt64Vector() throws -> [Int64] {
        var reader = try readMessage()
        return try decodingMessage("Int64Vector") {
            var values: [Int64] = []
            while let tag = try reader.nextField() {
                if tag.fieldNumber == 1 { try reader.readRepeatedInt64(into: &values) } else { try reader.skipField() }
            }
            return values
        }
    }

    /// Decodes the current field as a message whose field 1 is `repeated double` (`DoubleVector`,
    /// `DenseVector`, `Coefficients`, `GLM…DoubleArray`).
    mutating func readDoubles(_ name: String) throws -> [Double] {
        var reader = try readMessage()
        return try decodingMessage(name) {
            var values: [Double] = []
            while let tag = try reader.nextField() {
                if tag.fieldNumber == 1 { try reader.readRepeatedDouble(into: &values) } else { try reader.skipField() }
            }
            return values
        }
    }

    /// Decodes the current field as `FloatVector { repeated float vector = 1 }`.
    mutating func readFloatVector() throws -> [Float] {
        var reader = try readMessage()
        return try decodingMessage("FloatVector") {
            var values: [Float] = []
            while let tag = try reader.nextField() {
                if tag.fieldNumber == 1 { try reader.readRepeatedFloat(into: &values) } else { try reader.skipField() }
            }
            return values
        }
    }

    /// Decodes the current field as a map message `{ repeated MapEntry map = 1 }` whose
    /// entries are `{ key = 1; value = 2 }`, with the given key and value readers.
    mutating func readMap<K, V>(
        _ name: String, key readKey: (inout ProtobufReader) throws -> K,
        value readValue: (inout ProtobufReader) throws -> V, defaults: (K, V)
    ) throws -> [(K, V)] {
        var reader = try readMessage()
        return try decodingMessage(name) {
            var entries: [(K, V)] = []
            while let tag = try reader.nextField() {
                guard tag.fieldNumber == 1 else {
                    try reader.skipField()
                    continue
                }
                var entry = try reader.readMessage()
                var (key, value) = defaults
                while let field = try entry.nextField() {
                    switch field.fieldNumber {
                    case 1: key = try readKey(&entry)
                    case 2: value = try readValue(&entry)
                    default: try entry.skipField()
                    }
                }
                entries.append((key, value))
            }
            return entries
        }
    }

    /// Reads `ClassLabels` alternatives: field 100 `StringVector`, 101 `Int64Vector`.
    mutating func readClassLabels(_ fieldNumber: Int) throws -> CoreMLSpec.ClassLabels {
        fieldNumber == 100 ? .strings(try readStringVector()) : .int64s(try readInt64Vector())
    }
}
