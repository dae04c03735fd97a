import Foundation
import TesseraModels
import TesseraMultiArray
import TesseraTensor
import Testing

@Suite("API: model descriptions")
struct APIModelDescriptionTests {
    @Test(
        "descriptions match coremltools' summaries",
        arguments: ["linear_relu_softmax", "classifier", "flexible_shapes"])
    func matchesFixture(_ name: String) throws {
        let fixture = ModelFixture.load(name)
        let model = try MLModel(contentsOf: fixture.packageURL)
        let description = model.modelDescription
        #expect(Set(description.inputDescriptionsByName.keys) == Set(fixture.inputs.map(\.name)))
        #expect(Set(description.outputDescriptionsByName.keys) == Set(fixture.outputs.map(\.name)))
        #expect(description.inputOrder == fixture.inputs.map(\.name))
        #expect(description.outputOrder == fixture.outputs.map(\.name))
        for feature in fixture.inputs + fixture.outputs {
            let got = try #require(
                description.inputDescriptionsByName[feature.name] ?? description.outputDescriptionsByName[feature.name])
            #expect(got.name == feature.name)
            #expect(got.isOptional == feature.isOptional)
            switch feature.kind {
            case "multiArrayType":
                #expect(got.type == .multiArray)
                let constraint = try #require(got.multiArrayConstraint)
                #expect(constraint.shape.map(\.intValue) == feature.shape)
                #expect("\(constraint.dataType)" == feature.dataType)
                if let shapes = feature.enumeratedShapes {
                    #expect(constraint.shapeConstraint.type == .enumerated)
                    #expect(constraint.shapeConstraint.enumeratedShapes.map { $0.map(\.intValue) } == shapes)
                } else if let ranges = feature.shapeRange {
                    #expect(constraint.shapeConstraint.type == .range)
                    let got = constraint.shapeConstraint.sizeRangeForDimension.map(\.rangeValue)
                    #expect(got.map { [$0.location, $0.location + $0.length] } == ranges)
                } else {
                    #expect(constraint.shapeConstraint.type == .unspecified)
                }
            case "stringType": #expect(got.type == .string)
            case "dictionaryType":
                #expect(got.type == .dictionary)
                #expect(got.dictionaryConstraint?.keyType == (feature.keyType == "stringKeyType" ? .string : .int64))
            default: Issue.record("unexpected kind \(feature.kind)")
            }
        }
        #expect(description.predictedFeatureName == fixture.predictedFeatureName.nilIfEmptyForTest)
        #expect(description.predictedProbabilitiesName == fixture.predictedProbabilitiesName.nilIfEmptyForTest)
        #expect(description.metadata[.author] as? String == fixture.metadata.author.nilIfEmptyForTest)
        #expect(description.metadata[.license] as? String == fixture.metadata.license.nilIfEmptyForTest)
        #expect(description.metadata[.versionString] as? String == fixture.metadata.versionString.nilIfEmptyForTest)
        #expect(description.metadata[.description] as? String == fixture.metadata.shortDescription.nilIfEmptyForTest)
        #expect(description.metadata[.creatorDefinedKey] as? [String: String] == fixture.metadata.userDefined)
        #expect(!description.isUpdatable)
    }

    @Test("a classifier lists its labels")
    func classLabels() throws {
        let model = try MLModel(contentsOf: modelFixture("classifier.mlpackage"))
        #expect(model.modelDescription.classLabels as? [String] == ["cat", "dog", "bird"])
        let plain = try MLModel(contentsOf: modelFixture("linear_relu_softmax.mlpackage"))
        #expect(plain.modelDescription.classLabels == nil)
        #expect(plain.modelDescription.predictedFeatureName == nil)
    }

    @Test("the input's documentation and a readable description")
    func documentation() throws {
        let model = try MLModel(contentsOf: modelFixture("linear_relu_softmax.mlpackage"))
        let x = try #require(model.modelDescription.inputDescriptionsByName["x"])
        #expect(x.shortDescription == "an input row")
        #expect(x.description == "x: multiArray (float32 [1, 8])")
    }

    @Test("isAllowedValue checks type and shape")
    func isAllowedValue() throws {
        let model = try MLModel(contentsOf: modelFixture("flexible_shapes.mlpackage"))
        let tokens = try #require(model.modelDescription.inputDescriptionsByName["tokens"])
        let mask = try #require(model.modelDescription.inputDescriptionsByName["mask"])
        func array(_ shape: [Int]) throws -> MLFeatureValue {
            MLFeatureValue(multiArray: try MLMultiArray(shape: shape.map { NSNumber(value: $0) }, dataType: .float32))
        }
        #expect(tokens.isAllowedValue(try array([1, 64, 8])))
        #expect(!tokens.isAllowedValue(try array([1, 65, 8])))
        #expect(!tokens.isAllowedValue(try array([1, 4])))
        #expect(mask.isAllowedValue(try array([1, 16, 8])))
        #expect(!mask.isAllowedValue(try array([1, 8, 8])))
        #expect(!mask.isAllowedValue(MLFeatureValue(string: "x")))
        #expect(!mask.isAllowedValue(MLFeatureValue(undefined: .multiArray)))
    }

    @Test("configuration defaults, and the model keeps a copy")
    func configuration() throws {
        let configuration = MLModelConfiguration()
        #expect(configuration.computeUnits == .all)
        #expect(configuration.functionName == nil)
        configuration.computeUnits = .cpuOnly
        configuration.modelDisplayName = "digits"
        let model = try MLModel(contentsOf: DigitsDemo.packageURL, configuration: configuration)
        configuration.computeUnits = .cpuAndGPU
        #expect(model.configuration.computeUnits == .cpuOnly)
        #expect(model.configuration.modelDisplayName == "digits")
    }

    @Test("an unknown function name fails the load")
    func unknownFunction() {
        let configuration = MLModelConfiguration()
        configuration.functionName = "encoder"
        expectModelError(.io, containing: ["encoder"]) {
            _ = try MLModel(contentsOf: DigitsDemo.packageURL, configuration: configuration)
        }
    }
}

extension String {
    var nilIfEmptyForTest: String? { isEmpty ? nil : self }
}
