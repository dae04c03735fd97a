import Foundation
import TesseraProtobuf
import Testing

@testable import TesseraModels

@Suite("Core ML specifications from hand-built protobuf")
struct CoreMLSpecDecodingTests {
    typealias B = SpecBuilder

    /// A model whose description has one input of the given `FeatureType` body.
    func decodeInputType(_ type: @escaping B.Body) throws -> CoreMLSpec.FeatureType {
        let bytes = B.model(
            description: { description in
                description.writeMessage(field: 1) { feature in
                    feature.writeString("in", field: 1)
                    feature.writeMessage(field: 3, type)
                }
            }, operations: [], outputs: [])
        let model = try CoreMLSpec.Model(decoding: Data(bytes), file: "test.mlmodel")
        return try #require(model.description.inputs.first).type
    }

    @Test("scalar, string, dictionary, sequence and state feature types")
    func featureKinds() throws {
        #expect(try decodeInputType { $0.writeMessage(field: 1) { _ in } }.kind == .int64)
        #expect(try decodeInputType { $0.writeMessage(field: 2) { _ in } }.kind == .double)
        let optionalString = try decodeInputType {
            $0.writeMessage(field: 3) { _ in }
            $0.writeBool(true, field: 1000)
        }
        #expect(optionalString.kind == .string && optionalString.isOptional)
        #expect(
            try decodeInputType { $0.writeMessage(field: 6) { $0.writeMessage(field: 1) { _ in } } }.kind
                == .dictionary(keyType: .int64))
        #expect(
            try decodeInputType { $0.writeMessage(field: 6) { $0.writeMessage(field: 2) { _ in } } }.kind
                == .dictionary(keyType: .string))
        let sequence = try decodeInputType { type in
            type.writeMessage(field: 7) { sequence in
                sequence.writeMessage(field: 3) { _ in }
                sequence.writeMessage(field: 101) { range in
                    range.writeUInt64(1, field: 1)
                    range.writeInt64(-1, field: 2)
                }
            }
        }
        #expect(
            sequence.kind
                == .sequence(.init(element: .string, sizeRange: .init(lowerBound: 1, upperBound: nil))))
        let state = try decodeInputType { type in
            type.writeMessage(field: 8) { state in
                state.writeMessage(field: 1) { array in
                    array.writePackedVarints([1, 8], field: 1)
                    array.writeInt64(65552, field: 2)
                }
            }
        }
        #expect(state.kind == .state(.init(shape: [1, 8], dataType: .float16)))
    }

    @Test("multi-array types: unpacked shapes, every data type, defaults, flexible shapes")
    func multiArrays() throws {
        for type in CoreMLSpec.ArrayDataType.allCases {
            let decoded = try decodeInputType { feature in
                feature.writeMessage(field: 5) { array in
                    array.writeInt64(2, field: 1)  // unpacked shape entries
                    array.writeInt64(3, field: 1)
                    array.writeInt64(Int64(type.rawValue), field: 2)
                    array.writeDouble(0.5, field: 61)
                    array.writeMessage(field: 21) { shapes in
                        shapes.writeMessage(field: 1) { $0.writePackedVarints([2, 3], field: 1) }
                        shapes.writeMessage(field: 1) { $0.writePackedVarints([4, 3], field: 1) }
                    }
                }
            }
            guard case .multiArray(let array) = decoded.kind else {
                Issue.record("expected a multi-array")
                continue
            }
            #expect(array.shape == [2, 3])
            #expect(array.dataType == type)
            #expect(array.defaultValue == .double(0.5))
            #expect(array.shapeFlexibility == .enumerated([[2, 3], [4, 3]]))
        }
        let error = expectFormatError(.invalidSpecification) {
            _ = try decodeInputType { $0.writeMessage(field: 5) { $0.writeInt64(7, field: 2) } }
        }
        #expect(
            error?.messagePath == [
                "Model", "ModelDescription", "FeatureDescription", "FeatureType", "ArrayFeatureType",
            ])
        #expect(error?.file == "test.mlmodel")
        expectFormatError(.invalidSpecification) {
            _ = try decodeInputType { $0.writeMessage(field: 5) { $0.writeInt64(-3, field: 1) } }
        }
        expectFormatError(.invalidSpecification) {
            _ = try decodeInputType { type in
                type.writeMessage(field: 5) { array in
                    array.writeMessage(field: 31) { ranges in
                        ranges.writeMessage(field: 1) { range in
                            range.writeUInt64(5, field: 1)
                            range.writeInt64(2, field: 2)
                        }
                    }
                }
            }
        }
    }

    @Test("image types with enumerated sizes and size ranges")
    func images() throws {
        let enumerated = try decodeInputType { type in
            type.writeMessage(field: 4) { image in
                image.writeInt64(224, field: 1)
                image.writeInt64(160, field: 2)
                image.writeInt64(30, field: 3)
                image.writeMessage(field: 21) { sizes in
                    sizes.writeMessage(field: 1) { size in
                        size.writeUInt64(224, field: 1)
                        size.writeUInt64(160, field: 2)
                    }
                }
            }
        }
        guard case .image(let image) = enumerated.kind else {
            Issue.record("expected an image")
            return
        }
        #expect(image.width == 224 && image.height == 160 && image.colorSpace == .bgr)
        #expect(image.sizeFlexibility == .enumerated([(width: 224, height: 160)]))

        let ranged = try decodeInputType { type in
            type.writeMessage(field: 4) { image in
                image.writeInt64(20, field: 3)
                image.writeMessage(field: 31) { range in
                    range.writeMessage(field: 1) {
                        $0.writeUInt64(64, field: 1)
                        $0.writeInt64(512, field: 2)
                    }
                    range.writeMessage(field: 2) {
                        $0.writeUInt64(32, field: 1)
                        $0.writeInt64(-1, field: 2)
                    }
                }
            }
        }
        if case .image(let image) = ranged.kind {
            #expect(image.colorSpace == .rgb)
            #expect(
                image.sizeFlexibility
                    == .range(
                        width: .init(lowerBound: 64, upperBound: 512), height: .init(lowerBound: 32, upperBound: nil)))
        }
        expectFormatError(.invalidSpecification) {
            _ = try decodeInputType { $0.writeMessage(field: 4) { $0.writeInt64(11, field: 3) } }
        }
    }

    @Test("metadata, states, functions and the default function")
    func descriptionFields() throws {
        let bytes = B.model(
            description: { description in
                description.writeMessage(field: 13) { state in
                    state.writeString("cache", field: 1)
                    state.writeMessage(field: 3) {
                        $0.writeMessage(field: 8) { $0.writeMessage(field: 1) { $0.writePackedVarints([4], field: 1) } }
                    }
                }
                description.writeMessage(field: 20) { function in
                    function.writeString("main", field: 1)
                    function.writeMessage(field: 3) { output in
                        output.writeString("y", field: 1)
                        output.writeMessage(field: 3) { $0.writeMessage(field: 2) { _ in } }
                    }
                }
                description.writeString("main", field: 21)
                description.writeMessage(field: 100) { metadata in
                    metadata.writeString("Ada", field: 3)
                    metadata.writeString("2.0", field: 2)
                    metadata.writeMessage(field: 100) { entry in
                        entry.writeString("v", field: 2)  // value before key is legal
                        entry.writeString("k", field: 1)
                    }
                }
            }, operations: [], outputs: [])
        let model = try CoreMLSpec.Model(decoding: Data(bytes), file: "test.mlmodel")
        let description = model.description
        #expect(description.states.map(\.name) == ["cache"])
        #expect(description.functions.map(\.name) == ["main"])
        #expect(description.functions.first?.outputs.first?.type.kind == .double)
        #expect(description.defaultFunctionName == "main")
        #expect(description.metadata.author == "Ada")
        #expect(description.metadata.versionString == "2.0")
        #expect(description.metadata.userDefined == ["k": "v"])
    }

    @Test("model types other than ML programs are recognised and rejected by name")
    func modelTypes() throws {
        for type in [
            CoreMLSpec.ModelType.treeEnsembleClassifier, .pipeline, .glmClassifier, .serializedModel,
        ] {
            var writer = ProtobufWriter()
            writer.writeInt64(4, field: 1)
            // Classic models' bodies are decoded (an empty one is valid); others are skipped.
            writer.writeMessage(field: type.rawValue) { if !type.isClassic { $0.writeUInt64(1, field: 1) } }
            let model = try CoreMLSpec.Model(decoding: Data(writer.bytes), file: "old.mlmodel")
            #expect(model.type == type)
            let error = expectFormatError(.unsupportedModelType) { _ = try model.requireMLProgram(file: "old.mlmodel") }
            #expect(error.map { "\($0)".contains("a \(type) model (Model field \(type.rawValue))") } == true)
        }
        var empty = ProtobufWriter()
        empty.writeInt64(6, field: 1)
        let untyped = try CoreMLSpec.Model(decoding: Data(empty.bytes), file: "empty.mlmodel")
        expectFormatError(.unsupportedModelType) { _ = try untyped.requireMLProgram(file: "empty.mlmodel") }
    }

    @Test("programs with control flow, variadic arguments and literal bindings")
    func programStructure() throws {
        let fp32 = B.tensorValueType(11, [1, 4])
        let inner: B.Body = { block in
            block.writeString("inner_out", field: 2)
            block.writeMessage(
                field: 3, B.operation("relu", name: "inner", inputs: [("x", ["x"])], outputs: [("inner_out", fp32)]))
        }
        let concat: B.Body = { writer in
            B.operation(
                "concat", name: "cat", inputs: [("values", ["x", "x", "x"])],
                outputs: [("cat", B.tensorValueType(11, [3, 4]))])(&writer)
            // A literal binding, as coremltools writes classify.classes.
            B.mapEntry(field: 2, key: "axis") { argument in
                argument.writeMessage(field: 1) { binding in
                    binding.writeMessage(
                        field: 2,
                        B.immediateTensor(type: B.tensorValueType(23, []), field: 2) {
                            $0.writePackedVarints([0], field: 1)
                        })
                }
            }(&writer)
        }
        let bytes = B.model(
            inputs: [("x", fp32)],
            operations: [
                B.operation(
                    "cond", name: "branch", inputs: [("pred", ["p"])], outputs: [("inner_out", fp32)],
                    blocks: [inner, inner]),
                concat,
            ],
            outputs: ["cat"])
        let model = try CoreMLSpec.Model(decoding: Data(bytes), file: "test.mlmodel")
        let function = try #require(model.mlProgram).function()
        #expect(function.inputs.map(\.name) == ["x"])
        let block = try function.block()
        #expect(block.outputs == ["cat"])
        #expect(block.operations.map(\.type) == ["cond", "concat"])
        #expect(block.operations[0].blocks.count == 2)
        #expect(block.operations[0].blocks[0].operations.first?.name == "inner")
        let arguments = block.operations[1].inputs
        #expect(arguments["values"]?.bindings == [.name("x"), .name("x"), .name("x")])
        if case .value(let axis)? = arguments["axis"]?.bindings.first {
            #expect(axis.tensor == .ints([0]))
        } else {
            Issue.record("expected a literal axis")
        }
        expectFormatError(.invalidSpecification) { _ = try model.mlProgram?.function(named: "other") }
    }

    @Test("a block of many operations decodes them in order across the workers; the first bad one is reported")
    func manyOperations() throws {
        let fp32 = B.tensorValueType(11, [1, 4])
        func relu(_ index: Int) -> B.Body {
            B.operation(
                "relu", name: "op\(index)", inputs: [("x", [index == 0 ? "x" : "y\(index - 1)"])],
                outputs: [("y\(index)", fp32)])
        }
        // An output without a type: "\(name)" has no type.
        func untyped(_ name: String) -> B.Body {
            { writer in
                writer.writeString("relu", field: 1)
                writer.writeMessage(field: 3) { $0.writeString(name, field: 1) }
            }
        }
        let count = 300
        let bytes = B.model(inputs: [("x", fp32)], operations: (0..<count).map(relu), outputs: ["y\(count - 1)"])
        let model = try CoreMLSpec.Model(decoding: Data(bytes), file: "many.mlmodel")
        let operations = try #require(model.mlProgram).function().block().operations
        #expect(operations.map(\.name) == (0..<count).map { "op\($0)" })
        #expect(operations.map { $0.outputs.first?.name } == (0..<count).map { "y\($0)" })

        // Two bad operations far apart (in different runs of the workers): the earlier one's
        // error, whichever thread decoded it.
        for _ in 0..<20 {
            var broken = (0..<count).map(relu)
            broken[120] = untyped("first")
            broken[280] = untyped("second")
            let bad = B.model(inputs: [("x", fp32)], operations: broken, outputs: ["y\(count - 1)"])
            let error = expectFormatError(.invalidSpecification) {
                _ = try CoreMLSpec.Model(decoding: Data(bad), file: "many.mlmodel")
            }
            #expect(error.map { "\($0)".hasPrefix("many.mlmodel: \"first\" has no type") } == true)
        }
    }

    @Test("errors deep in a program name the file, the byte and the message path")
    func errorPath() throws {
        // An operation whose output has no type.
        let bytes = B.model(
            operations: [
                { writer in
                    writer.writeString("relu", field: 1)
                    writer.writeMessage(field: 3) { $0.writeString("y", field: 1) }
                }
            ], outputs: ["y"])
        let error = expectFormatError(.invalidSpecification) {
            _ = try CoreMLSpec.Model(decoding: Data(bytes), file: "model.mlmodel")
        }
        #expect(error?.messagePath == ["Model", "Program", "Function", "Block", "Operation", "NamedValueType"])
        #expect(error.map { "\($0)".hasPrefix("model.mlmodel: \"y\" has no type at byte ") } == true)

        let truncated = Array(bytes.dropLast(3))
        let wireError = expectFormatError(.malformedProtobuf) {
            _ = try CoreMLSpec.Model(decoding: Data(truncated), file: "model.mlmodel")
        }
        #expect(wireError?.messagePath.first == "Model")
    }
}
