import Foundation
import TesseraModels
import TesseraTensor

/// A model's description in the JSON form the Python binding reads.
///
/// ```json
/// {"inputs": [{"name": "image", "type": "multiArray", "dataType": "float32", "shape": [1, 64],
///              "shapeConstraint": "unspecified", "isOptional": false, "shortDescription": ""}],
///  "outputs": [...], "states": [...], "predictedFeatureName": "classLabel",
///  "classLabels": ["0", "1"], "metadata": {"author": "", "userDefined": {}}}
/// ```
///
/// Inputs and outputs are in the model's order. A size range's upper bound is -1 when the
/// dimension is unbounded. Class labels are strings or integers, as the model declares them.
struct ModelDescriptionJSON: Encodable {
    /// One feature's name, type and constraints.
    struct Feature: Encodable {
        var name: String
        var type: String
        var isOptional: Bool
        var shortDescription: String
        var dataType: String?
        var shape: [Int]?
        var shapeConstraint: String?
        var enumeratedShapes: [[Int]]?
        var sizeRanges: [[Int]]?
        var keyType: String?
        var imageWidth: Int?
        var imageHeight: Int?

        init(_ description: MLFeatureDescription) {
            name = description.name
            type = description.type.description
            isOptional = description.isOptional
            shortDescription = description.shortDescription
            if let array = description.multiArrayConstraint {
                dataType = Self.name(of: array.dataType)
                shape = array.shape.map(\.intValue)
                let flexible = array.shapeConstraint
                switch flexible.type {
                case .unspecified: shapeConstraint = "unspecified"
                case .enumerated:
                    shapeConstraint = "enumerated"
                    enumeratedShapes = flexible.enumeratedShapes.map { $0.map(\.intValue) }
                case .range:
                    shapeConstraint = "range"
                    sizeRanges = flexible.sizeRangeForDimension.map { value in
                        let range = value.rangeValue
                        let upper = range.length >= Int.max - range.location ? -1 : range.location + range.length
                        return [range.location, upper]
                    }
                }
            }
            if let state = description.stateConstraint {
                dataType = Self.name(of: state.dataType)
                shape = state.bufferShape
            }
            if let dictionary = description.dictionaryConstraint {
                keyType = dictionary.keyType.description
            }
            if let image = description.imageConstraint {
                imageWidth = image.pixelsWide
                imageHeight = image.pixelsHigh
            }
        }

        /// The NumPy name of a multi-array data type.
        static func name(of dataType: MLMultiArrayDataType) -> String {
            switch dataType {
            case .double: "float64"
            case .float32: "float32"
            case .float16: "float16"
            case .int32: "int32"
            case .int8: "int8"
            }
        }
    }

    /// A class label: a string or an integer.
    enum Label: Encodable {
        case string(String)
        case integer(Int64)

        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .string(let value): try container.encode(value)
            case .integer(let value): try container.encode(value)
            }
        }
    }

    var inputs: [Feature]
    var outputs: [Feature]
    var states: [Feature]
    var predictedFeatureName: String?
    var predictedProbabilitiesName: String?
    var classLabels: [Label]?
    var metadata: [String: String]
    var userDefined: [String: String]

    /// The JSON form of `description`.
    init(_ description: MLModelDescription) {
        inputs = description.inputOrder.compactMap { description.inputDescriptionsByName[$0] }.map(Feature.init)
        outputs = description.outputOrder.compactMap { description.outputDescriptionsByName[$0] }.map(Feature.init)
        states = description.stateDescriptionsByName.values.sorted { $0.name < $1.name }.map(Feature.init)
        predictedFeatureName = description.predictedFeatureName
        predictedProbabilitiesName = description.predictedProbabilitiesName
        classLabels = description.classLabels.map { labels in
            labels.map { label in
                if let integer = label as? Int64 { return .integer(integer) }
                return .string("\(label)")
            }
        }
        var metadata: [String: String] = [:]
        var userDefined: [String: String] = [:]
        for (key, value) in description.metadata {
            if key == .creatorDefinedKey {
                userDefined = value as? [String: String] ?? [:]
            } else if let string = value as? String {
                metadata[Self.metadataName(key)] = string
            }
        }
        self.metadata = metadata
        self.userDefined = userDefined
    }

    /// coremltools' name of a metadata entry (`author`, `shortDescription`, `license`,
    /// `versionString`).
    static func metadataName(_ key: MLModelMetadataKey) -> String {
        switch key {
        case .author: "author"
        case .description: "shortDescription"
        case .license: "license"
        case .versionString: "versionString"
        default: key.rawValue
        }
    }

    /// The description as a UTF-8 JSON string.
    func encoded() throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: try encoder.encode(self), as: UTF8.self)
    }
}
