import TesseraProtobuf

@testable import TesseraModels

/// Hand-built protobuf messages of the Core ML schema, written from the field numbers in
/// `mlmodel/format/{Model,FeatureTypes,MIL}.proto`, for inputs coremltools does not emit.
enum SpecBuilder {
    typealias Body = (inout ProtobufWriter) -> Void

    /// `TensorType { dataType = 1; rank = 2; dimensions = 3 }`; `nil` dimensions are unknown.
    static func tensorType(_ dataType: Int64, _ dimensions: [Int?]) -> Body {
        { writer in
            writer.writeInt64(dataType, field: 1)
            writer.writeInt64(Int64(dimensions.count), field: 2)
            for dimension in dimensions {
                writer.writeMessage(field: 3) { dim in
                    if let dimension {
                        dim.writeMessage(field: 1) { $0.writeUInt64(UInt64(dimension), field: 1) }
                    } else {
                        dim.writeMessage(field: 2) { $0.writeBool(false, field: 1) }
                    }
                }
            }
        }
    }

    /// `ValueType { tensorType = 1 }`.
    static func tensorValueType(_ dataType: Int64, _ dimensions: [Int?]) -> Body {
        { $0.writeMessage(field: 1, tensorType(dataType, dimensions)) }
    }

    /// `Value { type = 2; immediateValue = 3 { tensor = 1 { <field> = { values = 1 } } } }`.
    static func immediateTensor(type: @escaping Body, field: Int, _ values: @escaping Body) -> Body {
        { writer in
            writer.writeMessage(field: 2, type)
            writer.writeMessage(field: 3) { immediate in
                immediate.writeMessage(field: 1) { tensor in tensor.writeMessage(field: field, values) }
            }
        }
    }

    /// A scalar string value, as coremltools writes op names.
    static func stringValue(_ string: String) -> Body {
        immediateTensor(type: tensorValueType(2, []), field: 4) { $0.writeString(string, field: 1) }
    }

    /// `Value { type = 2; blobFileValue = 5 { fileName = 1; offset = 2 } }`.
    static func blobValue(type: @escaping Body, fileName: String, offset: UInt64) -> Body {
        { writer in
            writer.writeMessage(field: 2, type)
            writer.writeMessage(field: 5) { blob in
                blob.writeString(fileName, field: 1)
                blob.writeUInt64(offset, field: 2)
            }
        }
    }

    /// A map entry `{ key = 1; value = 2 }`.
    static func mapEntry(field: Int, key: String, value: @escaping Body) -> Body {
        { writer in
            writer.writeMessage(field: field) { entry in
                entry.writeString(key, field: 1)
                entry.writeMessage(field: 2, value)
            }
        }
    }

    /// `Operation { type = 1; inputs = 2; outputs = 3; attributes = 5 }` with name-bound inputs.
    static func operation(
        _ type: String, name: String, inputs: [(String, [String])] = [], outputs: [(String, Body)] = [],
        attributes: [(String, Body)] = [], blocks: [Body] = []
    ) -> Body {
        { writer in
            writer.writeString(type, field: 1)
            for (key, names) in inputs {
                mapEntry(field: 2, key: key) { argument in
                    for name in names { argument.writeMessage(field: 1) { $0.writeString(name, field: 1) } }
                }(&writer)
            }
            for (outputName, outputType) in outputs {
                writer.writeMessage(field: 3) { named in
                    named.writeString(outputName, field: 1)
                    named.writeMessage(field: 2, outputType)
                }
            }
            for block in blocks { writer.writeMessage(field: 4, block) }
            mapEntry(field: 5, key: "name", value: stringValue(name))(&writer)
            for (key, value) in attributes { mapEntry(field: 5, key: key, value: value)(&writer) }
        }
    }

    /// `Model { specificationVersion = 1; description = 2; mlProgram = 502 { functions["main"] } }`
    /// with one function of the given operations and outputs.
    static func model(
        description: @escaping Body = { _ in }, opset: String = "CoreML5", inputs: [(String, Body)] = [],
        operations: [Body], outputs: [String]
    ) -> [UInt8] {
        var writer = ProtobufWriter()
        writer.writeInt64(6, field: 1)
        writer.writeMessage(field: 2, description)
        writer.writeMessage(field: 502) { program in
            program.writeInt64(1, field: 1)
            mapEntry(field: 2, key: "main") { function in
                for (name, type) in inputs {
                    function.writeMessage(field: 1) { named in
                        named.writeString(name, field: 1)
                        named.writeMessage(field: 2, type)
                    }
                }
                function.writeString(opset, field: 2)
                mapEntry(field: 3, key: opset) { block in
                    for output in outputs { block.writeString(output, field: 2) }
                    for operation in operations { block.writeMessage(field: 3, operation) }
                }(&function)
            }(&program)
        }
        return writer.bytes
    }

    /// Decodes a value message.
    static func decodeValue(_ body: Body) throws -> MILValue {
        var writer = ProtobufWriter()
        body(&writer)
        return try writer.bytes.withUnsafeBytes { buffer in
            var reader = ProtobufReader(buffer)
            return try MILValue(from: &reader)
        }
    }
}
