import Foundation
import TesseraCoreVideo
import TesseraImaging
import TesseraTensor

extension MLModelDescription {
    /// Builds Apple's description from a parsed specification, for one function of a
    /// multi-function model (`functionName`) or the default one.
    ///
    /// - Throws: ``MLModelError`` `.io` when `functionName` names no function the file describes.
    package convenience init(_ model: CoreMLSpec.Model, functionName: String?) throws {
        let description = model.description
        var inputs = description.inputs
        var outputs = description.outputs
        var states = description.states
        var predicted = description.predictedFeatureName
        var probabilities = description.predictedProbabilitiesName
        if !description.functions.isEmpty {
            let name = functionName ?? description.defaultFunctionName
            guard let function = description.functions.first(where: { $0.name == name }) else {
                let known = description.functions.map(\.name).joined(separator: ", ")
                throw MLModelError(.io, "the model has no function \"\(name)\" (it has: \(known))")
            }
            inputs = function.inputs
            outputs = function.outputs
            states = function.states
            predicted = function.predictedFeatureName
            probabilities = function.predictedProbabilitiesName
        }
        let metadata = description.metadata
        var strings: [MLModelMetadataKey: String] = [:]
        for (key, value) in [
            (MLModelMetadataKey.author, metadata.author), (.description, metadata.shortDescription),
            (.license, metadata.license), (.versionString, metadata.versionString),
        ] where !value.isEmpty {
            strings[key] = value
        }
        self.init(
            inputs: inputs.map(MLFeatureDescription.init(spec:)),
            outputs: outputs.map(MLFeatureDescription.init(spec:)),
            states: states.map(MLFeatureDescription.init(spec:)),
            predictedFeatureName: predicted.isEmpty ? nil : predicted,
            predictedProbabilitiesName: probabilities.isEmpty ? nil : probabilities, isUpdatable: model.isUpdatable,
            metadata: strings, creatorDefined: metadata.userDefined, labels: predicted.isEmpty ? nil : model.classLabels
        )
    }
}

extension MLFeatureDescription {
    /// Apple's description of one parsed feature.
    convenience init(spec feature: CoreMLSpec.FeatureDescription) {
        let name = feature.name
        let optional = feature.type.isOptional
        let doc = feature.shortDescription
        switch feature.type.kind {
        case .int64:
            self.init(name: name, type: .int64, isOptional: optional, shortDescription: doc)
        case .double:
            self.init(name: name, type: .double, isOptional: optional, shortDescription: doc)
        case .string:
            self.init(name: name, type: .string, isOptional: optional, shortDescription: doc)
        case .multiArray(let array):
            self.init(
                name: name, type: .multiArray, isOptional: optional, shortDescription: doc,
                multiArrayConstraint: MLMultiArrayConstraint(spec: array))
        case .state(let array):
            let constraint = MLMultiArrayConstraint(spec: array)
            self.init(
                name: name, type: .state, isOptional: optional, shortDescription: doc,
                // A rank-0 state's buffer is [1], as every scalar outside the program is.
                stateConstraint: MLStateConstraint(
                    bufferShape: array.shape.isEmpty ? [1] : array.shape, dataType: constraint.dataType))
        case .dictionary(let keyType):
            self.init(
                name: name, type: .dictionary, isOptional: optional, shortDescription: doc,
                dictionaryConstraint: MLDictionaryConstraint(keyType: keyType == .string ? .string : .int64))
        case .sequence(let sequence):
            let elementType: MLFeatureType = sequence.element == .string ? .string : .int64
            let element = MLFeatureDescription(name: name, type: elementType, isOptional: false)
            let range = sequence.sizeRange.map(Self.nsRange) ?? NSRange(location: 0, length: Int.max)
            self.init(
                name: name, type: .sequence, isOptional: optional, shortDescription: doc,
                sequenceConstraint: MLSequenceConstraint(valueDescription: element, countRange: range))
        case .image(let image):
            self.init(
                name: name, type: .image, isOptional: optional, shortDescription: doc,
                imageConstraint: MLImageConstraint(spec: image))
        }
    }

    /// An inclusive size range as `NSRange`; unbounded ranges get length `Int.max - location`.
    static func nsRange(_ range: CoreMLSpec.SizeRange) -> NSRange {
        let upper = range.upperBound ?? Int.max
        return NSRange(location: range.lowerBound, length: upper - range.lowerBound)
    }
}

extension MLMultiArrayConstraint {
    /// Apple's constraint for a parsed array type.
    convenience init(spec array: CoreMLSpec.ArrayFeatureType) {
        let dataType: MLMultiArrayDataType =
            switch array.dataType {
            case .double: .double
            case .int32: .int32
            case .float16: .float16
            case .int8: .int8
            case .float32, nil: .float32
            }
        let flexible: MLMultiArrayShapeConstraint =
            switch array.shapeFlexibility {
            case .enumerated(let shapes): MLMultiArrayShapeConstraint(type: .enumerated, enumeratedShapes: shapes)
            case .range(let ranges):
                MLMultiArrayShapeConstraint(
                    type: .range,
                    sizeRanges: ranges.map { $0.lowerBound...max($0.lowerBound, $0.upperBound ?? Int.max) })
            case nil: MLMultiArrayShapeConstraint(type: .unspecified)
            }
        self.init(shape: array.shape, dataType: dataType, shapeConstraint: flexible)
    }
}

extension MLImageConstraint {
    /// Apple's constraint for a parsed image type.
    convenience init(spec image: CoreMLSpec.ImageFeatureType) {
        let layout: ImageColorLayout =
            switch image.colorSpace {
            case .grayscale: .grayscale
            case .grayscaleFloat16: .grayscaleFloat16
            case .bgr: .bgr
            case .rgb, .invalid: .rgb
            }
        let format = layout.pixelFormat
        let fixedWidth = NSRange(location: image.width, length: 0)
        let fixedHeight = NSRange(location: image.height, length: 0)
        let size: MLImageSizeConstraint =
            switch image.sizeFlexibility {
            case .enumerated(let sizes):
                MLImageSizeConstraint(
                    type: .enumerated, pixelsWideRange: fixedWidth, pixelsHighRange: fixedHeight,
                    sizes: sizes.map { MLImageSize(pixelsWide: $0.width, pixelsHigh: $0.height) })
            case .range(let width, let height):
                MLImageSizeConstraint(
                    type: .range, pixelsWideRange: MLFeatureDescription.nsRange(width),
                    pixelsHighRange: MLFeatureDescription.nsRange(height), sizes: [])
            case nil:
                MLImageSizeConstraint(
                    type: .unspecified, pixelsWideRange: fixedWidth, pixelsHighRange: fixedHeight, sizes: [])
            }
        self.init(
            pixelsWide: image.width, pixelsHigh: image.height, pixelFormatType: format, sizeConstraint: size,
            colorLayout: layout)
    }
}
