import TesseraProtobuf

/// Runs one message's decoder and records the message's name in any error it throws, so a
/// failure deep in a model names the path to it (`Model > Program > Function > …`).
///
/// Wire-format errors become ``ModelFormatError/Kind/malformedProtobuf``; the file name is
/// filled in by the caller that knows it.
@inline(__always)
func decodingMessage<T>(_ name: String, _ body: () throws -> T) throws -> T {
    do {
        return try body()
    } catch let error as ProtobufError {
        throw ModelFormatError(.malformedProtobuf, error.description, messagePath: [name])
    } catch var error as ModelFormatError {
        error.messagePath.insert(name, at: 0)
        throw error
    }
}

extension ProtobufReader {
    /// Decodes a `map<string, V>` entry (`key = 1`, `value = 2`) from the current field.
    ///
    /// Proto3 maps arrive as repeated entry messages whose fields may come in any order and
    /// may be missing (a missing key is `""`, a missing value is `V`'s default).
    mutating func readMapEntry<V>(
        default defaultValue: @autoclosure () -> V, value decodeValue: (inout ProtobufReader) throws -> V
    ) throws -> (key: String, value: V) {
        var entry = try readMessage()
        var key = ""
        var value: V?
        while let tag = try entry.nextField() {
            switch tag.fieldNumber {
            case 1: key = try entry.readString()
            case 2: value = try decodeValue(&entry)
            default: try entry.skipField()
            }
        }
        return (key, value ?? defaultValue())
    }

    /// Decodes a `map<string, string>` entry.
    mutating func readStringMapEntry() throws -> (key: String, value: String) {
        try readMapEntry(default: "") { try $0.readString() }
    }

    /// An ``ModelFormatError/Kind/invalidSpecification`` error at the current field.
    func invalid(_ message: String) -> ModelFormatError {
        let field = tag.map { " (\($0))" } ?? ""
        return ModelFormatError(.invalidSpecification, "\(message) at byte \(offset)\(field)")
    }
}
