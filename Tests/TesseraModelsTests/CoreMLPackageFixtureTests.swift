import Foundation
import Testing
import _TesseraTestSupport

@testable import TesseraModels

/// The names the fixture summaries use for the parsed enums.
extension CoreMLSpec.ArrayDataType {
    var fixtureName: String {
        switch self {
        case .float32: "float32"
        case .double: "float64"
        case .int32: "int32"
        case .float16: "float16"
        case .int8: "int8"
        }
    }
}

extension WeightBlobDataType {
    var fixtureName: String {
        switch self {
        case .float16: "float16"
        case .float32: "float32"
        case .uint8: "uint8"
        case .int8: "int8"
        default: "\(self)"
        }
    }
}

extension MILDataType {
    var fixtureName: String {
        switch self {
        case .float16: "float16"
        case .float32: "float32"
        case .float64: "float64"
        default: "\(self)"
        }
    }
}

/// Checks the parse of each coremltools-made package against what coremltools itself read
/// from it (`Tests/Fixtures/models/<name>.json`).
@Suite("Core ML packages made by coremltools")
struct CoreMLPackageFixtureTests {
    @Test("the specification header and description match coremltools", arguments: ModelFixture.all)
    func description(_ fixture: ModelFixture) throws {
        let package = try CoreMLPackage(contentsOf: fixture.packageURL)
        let model = package.model
        #expect(package.modelURL.lastPathComponent == "model.mlmodel")
        #expect(package.weightsDirectory.lastPathComponent == "weights")
        #expect(model.specificationVersion == fixture.specificationVersion)
        #expect(model.type == .mlProgram)
        #expect(fixture.modelType == "mlProgram")
        try checkFeatures(model.description.inputs, fixture.inputs)
        try checkFeatures(model.description.outputs, fixture.outputs)
        #expect(model.description.predictedFeatureName == fixture.predictedFeatureName)
        #expect(model.description.predictedProbabilitiesName == fixture.predictedProbabilitiesName)
        let metadata = model.description.metadata
        #expect(metadata.author == fixture.metadata.author)
        #expect(metadata.license == fixture.metadata.license)
        #expect(metadata.shortDescription == fixture.metadata.shortDescription)
        #expect(metadata.versionString == fixture.metadata.versionString)
        #expect(metadata.userDefined == fixture.metadata.userDefined)
    }

    func checkFeatures(_ features: [CoreMLSpec.FeatureDescription], _ expected: [ModelFixture.Feature]) throws {
        try #require(features.count == expected.count)
        for (feature, want) in zip(features, expected) {
            #expect(feature.name == want.name)
            #expect(feature.type.isOptional == want.isOptional)
            #expect(feature.shortDescription == (want.shortDescription ?? ""))
            switch feature.type.kind {
            case .multiArray(let array):
                #expect(want.kind == "multiArrayType")
                #expect(array.shape == want.shape)
                #expect(array.dataType?.fixtureName == want.dataType)
                switch array.shapeFlexibility {
                case .enumerated(let shapes): #expect(shapes == want.enumeratedShapes)
                case .range(let ranges):
                    let pairs = ranges.map { [$0.lowerBound, $0.upperBound ?? -1] }
                    #expect(pairs == want.shapeRange)
                case nil: #expect(want.enumeratedShapes == nil && want.shapeRange == nil)
                }
            case .string: #expect(want.kind == "stringType")
            case .dictionary(let key):
                #expect(want.kind == "dictionaryType")
                #expect(want.keyType == (key == .string ? "stringKeyType" : "int64KeyType"))
            default: Issue.record("unexpected feature kind \(feature.type.kind) for \(want.name)")
            }
        }
    }

    @Test("the ML program's functions, blocks and operations match coremltools", arguments: ModelFixture.all)
    func program(_ fixture: ModelFixture) throws {
        let package = try CoreMLPackage(contentsOf: fixture.packageURL)
        let program = try package.model.requireMLProgram(file: package.modelDisplayName)
        #expect(program.version == fixture.program.version)
        #expect(program.functions.keys.sorted() == fixture.program.functions)
        let function = try program.function()
        #expect(function.opset == fixture.program.opset)
        try #require(function.inputs.count == fixture.program.functionInputs.count)
        for (input, want) in zip(function.inputs, fixture.program.functionInputs) {
            #expect(input.name == want.name)
            #expect(input.type.tensorType?.dataType.fixtureName == want.dataType)
            #expect(input.type.tensorType?.rank == want.rank)
        }
        let block = try function.block()
        #expect(block.outputs == fixture.program.blockOutputs)
        try #require(block.operations.count == fixture.program.operations.count)
        for (operation, want) in zip(block.operations, fixture.program.operations) {
            #expect(operation.type == want.type)
            #expect(operation.outputs.map(\.name) == want.outputs)
            #expect(operation.name != nil)
            var inputs: [String: [String]] = [:]
            for (key, argument) in operation.inputs {
                inputs[key] = argument.bindings.map {
                    if case .name(let name) = $0 { name } else { "<value>" }
                }
            }
            #expect(inputs == want.inputs, "\(operation.type)")
            var attributes = operation.attributes
            attributes["name"] = nil
            #expect(attributes.keys.sorted() == (want.attributes ?? [:]).keys.sorted())
            for (key, wantValue) in want.attributes ?? [:] {
                try checkValue(try #require(attributes[key]), wantValue, context: "\(operation.type).\(key)")
            }
        }
    }

    func checkValue(_ value: MILValue, _ want: ModelFixture.Value, context: Comment) throws {
        let type = try #require(value.type?.tensorType, context)
        #expect(type.dataType.fixtureName == want.dataType, context)
        #expect(type.shape == want.shape, context)
        switch value.storage {
        case .blobFile(let reference):
            #expect(want.kind == "blob", context)
            #expect(reference.fileName == want.fileName, context)
            #expect(reference.offset == want.offset, context)
        case .immediate(.tensor(let tensor)):
            #expect(want.kind == "immediate", context)
            switch tensor {
            case .floats(let values):
                #expect(want.field == "floats", context)
                #expect(values.map { .number(Double($0)) } == want.values, context)
            case .ints(let values):
                #expect(want.field == "ints", context)
                #expect(values.map { .number(Double($0)) } == want.values, context)
            case .bools(let values):
                #expect(want.field == "bools", context)
                #expect(values.map { .bool($0) } == want.values, context)
            case .strings(let values):
                #expect(want.field == "strings", context)
                #expect(values.map { .string($0) } == want.values, context)
            case .bytes(let values):
                #expect(want.field == "bytes", context)
                #expect(values.count == want.byteCount, context)
            default: Issue.record("unexpected tensor storage \(tensor)", sourceLocation: #_sourceLocation)
            }
        default: Issue.record("unexpected value storage \(value.storage) for \(context)")
        }
    }

    @Test("weight.bin's blobs match coremltools' layout and the source arrays", arguments: ModelFixture.all)
    func weights(_ fixture: ModelFixture) throws {
        let package = try CoreMLPackage(contentsOf: fixture.packageURL)
        let summary = try #require(fixture.weightFile)
        let file = try #require(package.weightFiles["@model_path/weights/weight.bin"])
        #expect(file.blobCount == summary.count)
        #expect(file.byteCount == summary.fileSize)
        let blobs = try file.allBlobs()
        #expect(
            blobs.map { [Int($0.metadataOffset), $0.dataOffset, $0.byteCount, $0.paddingBits] }
                == summary.blobs.map { [Int($0.metadataOffset), $0.dataOffset, $0.sizeInBytes, $0.paddingBits] })
        #expect(blobs.map(\.dataType.fixtureName) == summary.blobs.map(\.dataType))
        for (name, want) in fixture.weightValues ?? [:] {
            let blob = try file.blob(atMetadataOffset: want.metadataOffset)
            let values = try file.floatValues(of: blob)
            #expect(values.count == want.count, "\(name)")
            #expect(values.prefix(4).map(Double.init) == want.first, "\(name)")
            #expect(values.suffix(2).map(Double.init) == want.last, "\(name)")
        }
    }

    @Test("every blob reference resolves to a blob of the constant's type")
    func blobReferencesResolve() throws {
        for fixture in ModelFixture.all {
            let package = try CoreMLPackage(contentsOf: fixture.packageURL)
            let program = try #require(package.model.mlProgram)
            var resolved = 0
            try program.forEachBlobReference { reference, type in
                let (_, blob) = try package.blob(for: reference, type: try #require(type?.tensorType))
                #expect(blob.metadataOffset == reference.offset)
                resolved += 1
            }
            #expect(resolved == fixture.weightValues?.count, "\(fixture.name)")
        }
    }

    @Test("a classifier's labels come from its classify op")
    func classLabels() throws {
        let package = try CoreMLPackage(contentsOf: Fixtures.url("models/classifier.mlpackage"))
        #expect(package.model.classLabels == .strings(["cat", "dog", "bird"]))
        #expect(package.model.description.predictedFeatureName == "classLabel")
        let plain = try CoreMLPackage(contentsOf: Fixtures.url("models/linear_relu_softmax.mlpackage"))
        #expect(plain.model.classLabels == nil)
    }

    @Test("a NeuralNetwork .mlmodel loads and is rejected with a clear error")
    func neuralNetwork() throws {
        let package = try CoreMLPackage(contentsOf: Fixtures.url("models/neural_network.mlmodel"))
        #expect(package.model.type == .neuralNetwork)
        #expect(package.model.description.inputs.map(\.name) == ["x"])
        #expect(throws: ModelFormatError.self) { try package.model.requireMLProgram(file: "neural_network.mlmodel") }
        do {
            _ = try package.model.requireMLProgram(file: "neural_network.mlmodel")
        } catch let error as ModelFormatError {
            #expect(error.kind == .unsupportedModelType)
            #expect("\(error)".contains("a neuralNetwork model (Model field 500)"))
            #expect("\(error)".contains("convert_to=\"mlprogram\""))
        }
    }
}
