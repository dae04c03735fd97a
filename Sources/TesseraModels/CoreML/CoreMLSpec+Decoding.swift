import Foundation
import TesseraProtobuf

extension CoreMLSpec.Model {
    /// The nesting limit for model files: deep enough for any real program (control flow
    /// nests a few blocks), shallow enough that recursive decoding cannot exhaust a stack.
    package static let maxNestingDepth = 64

    /// Decodes a serialized `Model` message (the bytes of `model.mlmodel`).
    ///
    /// - Parameters:
    ///   - data: The file's bytes.
    ///   - file: The file's name, used in error messages.
    /// - Throws: ``ModelFormatError`` naming the file, the byte offset and the message path.
    package init(decoding data: Data, file: String) throws {
        do {
            self = try data.withUnsafeBytes { buffer in
                var reader = ProtobufReader(buffer, maxDepth: Self.maxNestingDepth)
                return try Self(from: &reader)
            }
        } catch var error as ModelFormatError {
            error.file = file
            throw error
        }
    }

    /// Decodes `Model { specificationVersion = 1; description = 2; isUpdatable = 10; oneof Type }`.
    init(from reader: inout ProtobufReader) throws {
        self = try decodingMessage("Model") {
            var model = CoreMLSpec.Model(
                specificationVersion: 0, description: .init(), isUpdatable: false, type: nil, mlProgram: nil)
            while let tag = try reader.nextField() {
                switch tag.fieldNumber {
                case 1: model.specificationVersion = try reader.readInt32()
                case 2:
                    var child = try reader.readMessage()
                    model.description = try CoreMLSpec.ModelDescription(from: &child)
                case 10: model.isUpdatable = try reader.readBool()
                case CoreMLSpec.ModelType.mlProgram.rawValue:
                    var child = try reader.readMessage()
                    model.mlProgram = try MILProgram(from: &child)
                    model.type = .mlProgram
                    model.neuralNetwork = nil
                case 303, 403, 500:
                    var child = try reader.readMessage()
                    model.neuralNetwork = try CoreMLSpec.NeuralNetwork(from: &child, field: tag.fieldNumber)
                    model.type = CoreMLSpec.ModelType(rawValue: tag.fieldNumber)
                    model.mlProgram = nil
                default:
                    if let type = CoreMLSpec.ModelType(rawValue: tag.fieldNumber) {
                        // A oneof: the last alternative in the file wins.
                        model.type = type
                        model.mlProgram = nil
                        model.neuralNetwork = nil
                        model.classic = nil
                        if type.isClassic {
                            var child = try reader.readMessage()
                            model.classic = try CoreMLSpec.Classic.decode(type, from: &child)
                            continue
                        }
                    }
                    try reader.skipField()
                }
            }
            return model
        }
    }
}

extension CoreMLSpec.ModelDescription {
    /// Decodes `ModelDescription` (field numbers in `Model.proto`).
    init(from reader: inout ProtobufReader) throws {
        self = try decodingMessage("ModelDescription") {
            var description = CoreMLSpec.ModelDescription()
            while let tag = try reader.nextField() {
                switch tag.fieldNumber {
                case 1: description.inputs.append(try reader.readFeatureDescription())
                case 10: description.outputs.append(try reader.readFeatureDescription())
                case 11: description.predictedFeatureName = try reader.readString()
                case 12: description.predictedProbabilitiesName = try reader.readString()
                case 13: description.states.append(try reader.readFeatureDescription())
                case 20:
                    var child = try reader.readMessage()
                    description.functions.append(try CoreMLSpec.FunctionDescription(from: &child))
                case 21: description.defaultFunctionName = try reader.readString()
                case 50: description.trainingInputs.append(try reader.readFeatureDescription())
                case 100:
                    var child = try reader.readMessage()
                    description.metadata = try CoreMLSpec.Metadata(from: &child)
                default: try reader.skipField()
                }
            }
            return description
        }
    }
}

extension CoreMLSpec.FunctionDescription {
    /// Decodes `FunctionDescription { name = 1; input = 2; output = 3; predictedFeatureName = 4;
    /// predictedProbabilitiesName = 5; state = 6 }`.
    init(from reader: inout ProtobufReader) throws {
        self = try decodingMessage("FunctionDescription") {
            var description = CoreMLSpec.FunctionDescription()
            while let tag = try reader.nextField() {
                switch tag.fieldNumber {
                case 1: description.name = try reader.readString()
                case 2: description.inputs.append(try reader.readFeatureDescription())
                case 3: description.outputs.append(try reader.readFeatureDescription())
                case 4: description.predictedFeatureName = try reader.readString()
                case 5: description.predictedProbabilitiesName = try reader.readString()
                case 6: description.states.append(try reader.readFeatureDescription())
                default: try reader.skipField()
                }
            }
            return description
        }
    }
}

extension CoreMLSpec.Metadata {
    /// Decodes `Metadata { shortDescription = 1; versionString = 2; author = 3; license = 4;
    /// userDefined = 100 (map<string, string>) }`.
    init(from reader: inout ProtobufReader) throws {
        self = try decodingMessage("Metadata") {
            var metadata = CoreMLSpec.Metadata()
            while let tag = try reader.nextField() {
                switch tag.fieldNumber {
                case 1: metadata.shortDescription = try reader.readString()
                case 2: metadata.versionString = try reader.readString()
                case 3: metadata.author = try reader.readString()
                case 4: metadata.license = try reader.readString()
                case 100:
                    let entry = try reader.readStringMapEntry()
                    metadata.userDefined[entry.key] = entry.value
                default: try reader.skipField()
                }
            }
            return metadata
        }
    }
}

extension ProtobufReader {
    /// Decodes the current field as `FeatureDescription { name = 1; shortDescription = 2; type = 3 }`.
    mutating func readFeatureDescription() throws -> CoreMLSpec.FeatureDescription {
        var reader = try readMessage()
        return try decodingMessage("FeatureDescription") {
            var name = ""
            var shortDescription = ""
            var type: CoreMLSpec.FeatureType?
            while let tag = try reader.nextField() {
                switch tag.fieldNumber {
                case 1: name = try reader.readString()
                case 2: shortDescription = try reader.readString()
                case 3:
                    var child = try reader.readMessage()
                    type = try CoreMLSpec.FeatureType(from: &child)
                default: try reader.skipField()
                }
            }
            guard let type else { throw reader.invalid("feature \"\(name)\" has no type") }
            return CoreMLSpec.FeatureDescription(name: name, shortDescription: shortDescription, type: type)
        }
    }
}
