import Foundation
import TesseraProtobuf
import Testing

@testable import TesseraModels

/// Expects `body` to throw a ``ModelFormatError`` of `kind`, and returns it.
@discardableResult
func expectFormatError(
    _ kind: ModelFormatError.Kind, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void
) -> ModelFormatError? {
    do {
        try body()
        Issue.record("expected a \(kind) error, got none", sourceLocation: sourceLocation)
    } catch let error as ModelFormatError {
        #expect(error.kind == kind, "\(error)", sourceLocation: sourceLocation)
        return error
    } catch {
        Issue.record("expected ModelFormatError, got \(error)", sourceLocation: sourceLocation)
    }
    return nil
}

@Suite("MIL values from hand-built protobuf")
struct MILValueDecodingTests {
    typealias B = SpecBuilder

    @Test("immediate tensors of every storage field decode with their types")
    func everyStorage() throws {
        let floats = try B.decodeValue(
            B.immediateTensor(type: B.tensorValueType(11, [2]), field: 1) {
                $0.writePackedFloats([1.5, -2], field: 1)
            })
        #expect(floats.tensor == .floats([1.5, -2]))
        #expect(floats.type == .tensor(MILTensorType(dataType: .float32, rank: 1, dimensions: [.constant(2)])))

        let ints = try B.decodeValue(
            B.immediateTensor(type: B.tensorValueType(23, [3]), field: 2) {
                $0.writePackedVarints([1, UInt64(bitPattern: -1), 7], field: 1)
            })
        #expect(ints.tensor == .ints([1, -1, 7]))

        let bools = try B.decodeValue(
            B.immediateTensor(type: B.tensorValueType(1, []), field: 3) {
                $0.writePackedVarints([1], field: 1)
            })
        #expect(bools.tensor == .bools([true]))

        let strings = try B.decodeValue(
            B.immediateTensor(type: B.tensorValueType(2, [2]), field: 4) {
                $0.writeString("same", field: 1)
                $0.writeString("", field: 1)
            })
        #expect(strings.tensor == .strings(["same", ""]))

        let longs = try B.decodeValue(
            B.immediateTensor(type: B.tensorValueType(24, [1]), field: 5) {
                $0.writeInt64(Int64.min, field: 1)  // unpacked is accepted too
            })
        #expect(longs.tensor == .longInts([Int64.min]))

        let doubles = try B.decodeValue(
            B.immediateTensor(type: B.tensorValueType(12, [2]), field: 6) {
                $0.writePackedDoubles([0.25, 1e300], field: 1)
            })
        #expect(doubles.tensor == .doubles([0.25, 1e300]))

        // fp16 [2] as raw bytes: 1.0 = 0x3C00, -2.0 = 0xC000, little-endian.
        let half = try B.decodeValue(
            B.immediateTensor(type: B.tensorValueType(10, [2]), field: 7) {
                $0.writeBytes([0x00, 0x3C, 0x00, 0xC0], field: 1)
            })
        #expect(half.tensor == .bytes([0x00, 0x3C, 0x00, 0xC0]))

        // uint4 [3] packs into 2 bytes.
        let nibbles = try B.decodeValue(
            B.immediateTensor(type: B.tensorValueType(35, [3]), field: 7) {
                $0.writeBytes([0x21, 0x03], field: 1)
            })
        #expect(nibbles.tensor?.count == 2)
    }

    @Test("lists, tuples and dictionaries nest values")
    func containers() throws {
        let element = B.immediateTensor(type: B.tensorValueType(2, []), field: 4) { $0.writeString("cat", field: 1) }
        let list = try B.decodeValue { writer in
            writer.writeMessage(field: 3) { immediate in
                immediate.writeMessage(field: 3) { list in
                    list.writeMessage(field: 1, element)
                    list.writeMessage(field: 1, element)
                }
            }
        }
        guard case .immediate(.list(let values)) = list.storage else {
            Issue.record("expected a list, got \(list.storage)")
            return
        }
        #expect(values.map(\.stringScalar) == ["cat", "cat"])

        let tuple = try B.decodeValue { writer in
            writer.writeMessage(field: 3) { $0.writeMessage(field: 2) { $0.writeMessage(field: 1, element) } }
        }
        if case .immediate(.tuple(let values)) = tuple.storage {
            #expect(values.count == 1)
        } else {
            Issue.record("expected a tuple")
        }

        let dictionary = try B.decodeValue { writer in
            writer.writeMessage(field: 3) { immediate in
                immediate.writeMessage(field: 4) { dictionary in
                    dictionary.writeMessage(field: 1) { pair in
                        pair.writeMessage(field: 1, element)
                        pair.writeMessage(
                            field: 2,
                            B.immediateTensor(type: B.tensorValueType(11, []), field: 1) {
                                $0.writePackedFloats([0.5], field: 1)
                            })
                    }
                }
            }
        }
        if case .immediate(.dictionary(let entries)) = dictionary.storage {
            #expect(entries.count == 1)
            #expect(entries.first?.key.stringScalar == "cat")
            #expect(entries.first?.value.tensor == .floats([0.5]))
        } else {
            Issue.record("expected a dictionary")
        }
    }

    @Test("list, tuple, dictionary and state types decode")
    func valueTypes() throws {
        let value = try B.decodeValue { writer in
            writer.writeMessage(field: 2) { type in
                type.writeMessage(field: 3) { tuple in
                    tuple.writeMessage(field: 1) { listType in
                        listType.writeMessage(field: 2) { list in
                            list.writeMessage(field: 1, B.tensorValueType(2, []))
                            list.writeMessage(field: 2) { $0.writeMessage(field: 1) { $0.writeUInt64(3, field: 1) } }
                        }
                    }
                    tuple.writeMessage(field: 1) { dictType in
                        dictType.writeMessage(field: 4) { dict in
                            dict.writeMessage(field: 1, B.tensorValueType(24, []))
                            dict.writeMessage(field: 2, B.tensorValueType(12, []))
                        }
                    }
                    tuple.writeMessage(field: 1) { stateType in
                        stateType.writeMessage(field: 5) { $0.writeMessage(field: 1, B.tensorValueType(10, [1, nil])) }
                    }
                }
            }
        }
        #expect(value.storage == .none)
        #expect(
            value.type?.description
                == "tuple<list<string[]>[3], dict<int64[], fp64[]>, state<fp16[1, ?]>>")
    }

    @Test("a blob-file value keeps its file name and metadata offset")
    func blobFile() throws {
        let value = try B.decodeValue(
            B.blobValue(type: B.tensorValueType(10, [4, 3]), fileName: "@model_path/weights/weight.bin", offset: 640))
        #expect(value.blobReference == MILBlobReference(fileName: "@model_path/weights/weight.bin", offset: 640))
        #expect(value.type?.tensorType?.elementCount == 12)
    }

    @Test("element counts that disagree with the type throw")
    func countMismatch() {
        let error = expectFormatError(.invalidSpecification) {
            _ = try B.decodeValue(
                B.immediateTensor(type: B.tensorValueType(11, [3]), field: 1) {
                    $0.writePackedFloats([1, 2], field: 1)
                })
        }
        #expect(error.map { "\($0)".contains("fp32[3] value holds 2 elements instead of 3") } == true)
        expectFormatError(.invalidSpecification) {
            _ = try B.decodeValue(
                B.immediateTensor(type: B.tensorValueType(10, [2]), field: 7) {
                    $0.writeBytes([0, 0, 0], field: 1)
                })
        }
        expectFormatError(.invalidSpecification) {
            _ = try B.decodeValue(
                B.immediateTensor(type: B.tensorValueType(2, []), field: 7) {
                    $0.writeBytes([0], field: 1)
                })
        }
    }

    @Test("unknown data types and inconsistent ranks throw")
    func badTypes() {
        let error = expectFormatError(.invalidSpecification) {
            _ = try B.decodeValue { $0.writeMessage(field: 2, B.tensorValueType(99, [1])) }
        }
        #expect(error?.messagePath == ["Value", "ValueType", "TensorType"])
        expectFormatError(.invalidSpecification) {
            _ = try B.decodeValue { writer in
                writer.writeMessage(field: 2) { type in
                    type.writeMessage(field: 1) { tensor in
                        tensor.writeInt64(11, field: 1)
                        tensor.writeInt64(2, field: 2)
                    }
                }
            }
        }
        expectFormatError(.invalidSpecification) {
            _ = try B.decodeValue { $0.writeMessage(field: 2) { _ in } }
        }
    }

    @Test("unknown fields are skipped at every level")
    func unknownFields() throws {
        let value = try B.decodeValue { writer in
            writer.writeUInt64(1, field: 77)
            B.immediateTensor(
                type: { type in
                    type.writeString("future", field: 99)
                    B.tensorValueType(11, [1])(&type)
                }, field: 1
            ) { values in
                values.writeFixed64(0, field: 12)
                values.writePackedFloats([3], field: 1)
            }(&writer)
            writer.writeBytes([1, 2, 3], field: 4)
        }
        #expect(value.tensor == .floats([3]))
    }
}

@Suite("Nesting limits in model files")
struct ModelNestingTests {
    /// A `Model` whose program's only op has a `val` of `depth` nested lists, built inside
    /// out so building it needs no recursion.
    static func deeplyNestedModel(depth: Int) -> [UInt8] {
        var value: [UInt8] = []
        for _ in 0..<depth {
            var writer = ProtobufWriter()
            writer.writeMessage(field: 3) { immediate in
                immediate.writeMessage(field: 3) { list in list.writeBytes(value, field: 1) }
            }
            value = writer.bytes
        }
        let operation = SpecBuilder.operation("const", name: "c", attributes: [("val", { $0.writeRaw(value) })])
        return SpecBuilder.model(operations: [operation], outputs: [])
    }

    @Test("values nested thousands deep throw instead of overflowing the stack")
    func deepValues() throws {
        let error = expectFormatError(.malformedProtobuf) {
            _ = try CoreMLSpec.Model(decoding: Data(Self.deeplyNestedModel(depth: 5000)), file: "deep.mlmodel")
        }
        #expect(error.map { "\($0)".contains("messages nest deeper than 64 levels") } == true)
        // Moderate nesting, as real programs have, decodes.
        let model = try CoreMLSpec.Model(decoding: Data(Self.deeplyNestedModel(depth: 10)), file: "ok.mlmodel")
        #expect(try model.mlProgram?.function().block().operations.count == 1)
    }
}
