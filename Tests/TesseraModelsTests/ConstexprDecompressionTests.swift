import Foundation
import TesseraTensor
import Testing
import _TesseraTestSupport

@testable import TesseraModels

/// The compressed-weight packages of `tools/make_compression_fixtures.py`: for each, the
/// constexpr outputs coremltools decoded, by name.
enum CompressionFixtures {
    struct Output: Decodable {
        var op: String
        var shape: [Int]
    }

    static let all: [String: [String: Output]] = {
        do {
            let data = try Data(contentsOf: Fixtures.url("compression/fixtures.json"))
            return try JSONDecoder().decode([String: [String: Output]].self, from: data)
        } catch {
            preconditionFailure("[CompressionFixtures] cannot read fixtures.json: \(error)")
        }
    }()

    static var names: [String] { all.keys.sorted() }

    static func package(_ name: String) throws -> CoreMLPackage {
        try CoreMLPackage(contentsOf: Fixtures.url("compression/\(name).mlpackage"))
    }

    /// Decodes every constexpr op of the main function in order, as the lowering will.
    static func decodeAll(_ package: CoreMLPackage) throws -> [String: DenseConstant] {
        let program = try package.model.requireMLProgram(file: package.modelDisplayName)
        var known: [String: DenseConstant] = [:]
        for operation in try program.function().block().operations
        where ConstexprDecompression.handles(operation.type) {
            known[operation.outputs[0].name] = try ConstexprDecompression.decode(
                operation, in: package, known: known)
        }
        return known
    }
}

@Suite("Constexpr decompression")
struct ConstexprDecompressionTests {
    @Test("every constexpr op decodes to coremltools' own dense value", arguments: CompressionFixtures.names)
    func matchesCoremltools(_ name: String) throws {
        let package = try CompressionFixtures.package(name)
        let decoded = try CompressionFixtures.decodeAll(package)
        let outputs = try #require(CompressionFixtures.all[name])
        #expect(Set(decoded.keys) == Set(outputs.keys))
        for (output, info) in outputs {
            let got = try #require(decoded[output], "\(name): \(output) (\(info.op)) was not decoded")
            let expected = try Fixtures.npy("compression/\(name).\(output).npy")
            #expect(got.shape == expected.shape, "\(name).\(output)")
            #expect(got.shape == info.shape, "\(name).\(output)")
            let want = expected.floats
            #expect(got.values.count == want.count, "\(name).\(output)")
            var worst: Float = 0
            for (a, b) in zip(got.values, want) { worst = max(worst, abs(a - b) / max(1, abs(b))) }
            #expect(worst <= 1e-6, "\(name).\(output) (\(info.op)): largest difference \(worst)")
        }
    }

    @Test("the fixtures cover every op and both forms of the ops that have two")
    func coverage() {
        var ops: [String: Set<String>] = [:]
        for (name, outputs) in CompressionFixtures.all {
            for output in outputs.values { ops[output.op, default: []].insert(name.hasSuffix("ios18") ? "18" : "16") }
        }
        #expect(ops["constexpr_affine_dequantize"] == ["16"])
        #expect(ops["constexpr_cast"] == ["16"])
        #expect(ops["constexpr_lut_to_dense"] == ["16", "18"])
        #expect(ops["constexpr_sparse_to_dense"] == ["16", "18"])
        #expect(ops["constexpr_blockwise_shift_scale"] == ["18"])
        // The two-output sparse ops are covered by the mil-ops fixtures (MILOpFixtureTests).
        let sparse: Set = ["constexpr_lut_to_sparse", "constexpr_sparse_blockwise_shift_scale"]
        #expect(ConstexprDecompression.opTypes.subtracting(sparse).allSatisfy { ops[$0] != nil })
    }

    @Test("handles() names exactly the decoded ops")
    func handles() {
        #expect(ConstexprDecompression.handles("constexpr_lut_to_dense"))
        #expect(ConstexprDecompression.handles("constexpr_cast"))
        #expect(!ConstexprDecompression.handles("const"))
        #expect(ConstexprDecompression.handles("constexpr_lut_to_sparse"))
        #expect(!ConstexprDecompression.handles("constexpr_not_an_op"))
    }

    @Test("a truncated weight file is refused", arguments: CompressionFixtures.names)
    func truncated(_ name: String) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-constexpr-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let copy = directory.appendingPathComponent("\(name).mlpackage")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: Fixtures.url("compression/\(name).mlpackage"), to: copy)
        let weights = copy.appendingPathComponent("Data/com.apple.CoreML/weights/weight.bin")
        let bytes = try Data(contentsOf: weights)
        guard bytes.count > 128 else { return }  // every argument is inline
        try bytes.prefix(bytes.count - 9).write(to: weights)
        #expect(throws: ModelFormatError.self) {
            _ = try CompressionFixtures.decodeAll(try CoreMLPackage(contentsOf: copy))
        }
    }
}

/// Corrupted packages: every damaged copy either loads and decodes (the damage hit a value,
/// not a size or a type) or throws `ModelFormatError`; none crashes.
@Suite("Constexpr decompression: corrupted packages")
struct ConstexprCorruptionTests {
    @Test(
        "random byte corruptions of model.mlmodel and weight.bin throw or decode", arguments: CompressionFixtures.names)
    func corrupted(_ name: String) throws {
        let directory = try TemporaryDirectory()
        let copy = try directory.copy(Fixtures.url("compression/\(name).mlpackage"))
        let data = copy.appendingPathComponent("Data/com.apple.CoreML")
        var random = SeededRandom(seed: UInt64(name.utf8.reduce(0) { $0 &* 31 &+ UInt64($1) }))
        var failures = 0
        for file in ["model.mlmodel", "weights/weight.bin"] {
            let url = data.appendingPathComponent(file)
            let original = [UInt8](try Data(contentsOf: url))
            for _ in 0..<60 {
                var damaged = original
                let index = Int(random.next() % UInt64(damaged.count))
                damaged[index] ^= UInt8(truncatingIfNeeded: random.next() | 1)
                try Data(damaged).write(to: url)
                do {
                    _ = try CompressionFixtures.decodeAll(try CoreMLPackage(contentsOf: copy))
                } catch is ModelFormatError {
                    failures += 1
                }
            }
            try Data(original).write(to: url)
        }
        #expect(failures > 0, "\(name): no corruption was detected")
    }
}

/// Hand-built ops with one thing wrong each: every one throws a `ModelFormatError` naming the op.
@Suite("Constexpr decompression: malformed ops")
struct ConstexprMalformedTests {
    static func value(_ dataType: MILDataType, _ shape: [Int], _ storage: MILTensorStorage) -> MILValue {
        MILValue(
            type: .tensor(
                MILTensorType(dataType: dataType, rank: shape.count, dimensions: shape.map { .constant($0) })),
            storage: .immediate(.tensor(storage)))
    }

    static func floats(_ values: [Float], _ shape: [Int]? = nil) -> MILValue {
        value(.float32, shape ?? [values.count], .floats(values))
    }

    static func bytes(_ dataType: MILDataType, _ values: [UInt8], _ shape: [Int]) -> MILValue {
        value(dataType, shape, .bytes(values))
    }

    static func uint32s(_ values: [Int32]) -> MILValue { value(.uint32, [values.count], .ints(values)) }

    /// An op with its arguments as attributes (iOS16 style) or as literal inputs (iOS18 style).
    static func op(_ type: String, iOS18: Bool = false, _ arguments: [String: MILValue]) -> MILOperation {
        var attributes: MILNamedValues<MILValue> = ["name": value(.string, [], .strings(["bad_weight"]))]
        var inputs = MILNamedValues<MILArgument>()
        for (name, value) in arguments {
            if iOS18 { inputs[name] = MILArgument(bindings: [.value(value)]) } else { attributes[name] = value }
        }
        return MILOperation(
            type: type, inputs: inputs,
            outputs: [
                MILNamedValueType(name: "w", type: .tensor(MILTensorType(dataType: .float32, rank: -1, dimensions: [])))
            ],
            blocks: [], attributes: attributes)
    }

    static let cases: [(String, MILOperation, String)] = [
        (
            "lut with 5 entries",
            op(
                "constexpr_lut_to_dense",
                ["lut": floats([1, 2, 3, 4, 5]), "indices": bytes(.uint8, [0], [1]), "shape": uint32s([2])]),
            "5 entries"
        ),
        (
            "lut indices too short",
            op(
                "constexpr_lut_to_dense",
                ["lut": floats([1, 2, 3, 4]), "indices": bytes(.uint8, [0], [1]), "shape": uint32s([8])]), "need 2"
        ),
        (
            "lut shape negative",
            op(
                "constexpr_lut_to_dense",
                ["lut": floats([1, 2]), "indices": bytes(.uint8, [0], [1]), "shape": value(.int32, [1], .ints([-4]))]),
            "not a valid shape"
        ),
        (
            "lut shape beyond Int",
            op(
                "constexpr_lut_to_dense",
                [
                    "lut": floats([1, 2]), "indices": bytes(.uint8, [0], [1]),
                    "shape": value(.int64, [1], .longInts([Int64.max])),
                ]), "not a valid shape"
        ),
        (
            "lut shape overflowing",
            op(
                "constexpr_lut_to_dense",
                [
                    "lut": floats([1, 2]), "indices": bytes(.uint8, [0], [1]),
                    "shape": value(.int64, [3], .longInts([1 << 31, 1 << 31, 1 << 31])),
                ]), "not a valid shape"
        ),
        (
            "lut18 rank",
            op(
                "constexpr_lut_to_dense", iOS18: true,
                ["lut": floats([1, 2], [2]), "indices": bytes(.uint1, [0], [2])]), "rank must be 3"
        ),
        (
            "lut18 palette size",
            op(
                "constexpr_lut_to_dense", iOS18: true,
                ["lut": floats([1, 2, 3], [1, 3, 1]), "indices": bytes(.uint1, [0], [2])]), "need 2"
        ),
        (
            "lut18 blocks",
            op(
                "constexpr_lut_to_dense", iOS18: true,
                ["lut": floats([1, 2, 3, 4, 5, 6], [3, 2, 1]), "indices": bytes(.uint1, [0], [2])]), "do not divide"
        ),
        (
            "lut18 wide indices",
            op(
                "constexpr_lut_to_dense", iOS18: true,
                ["lut": floats([1, 2], [1, 2, 1]), "indices": value(.int32, [1], .ints([0]))]), "uint1"
        ),
        (
            "affine scale size",
            op(
                "constexpr_affine_dequantize",
                [
                    "quantized_data": bytes(.int8, [1, 2, 3, 4], [2, 2]), "zero_point": bytes(.int8, [0], []),
                    "scale": floats([1, 2, 3]), "axis": value(.int32, [], .ints([0])),
                ]), "scale has shape [3]"
        ),
        (
            "affine axis",
            op(
                "constexpr_affine_dequantize",
                [
                    "quantized_data": bytes(.int8, [1, 2, 3, 4], [2, 2]), "zero_point": bytes(.int8, [0], []),
                    "scale": floats([1], []), "axis": value(.int32, [], .ints([2])),
                ]), "axis 2 is out of range"
        ),
        (
            "affine float data",
            op(
                "constexpr_affine_dequantize",
                [
                    "quantized_data": floats([1, 2]), "zero_point": bytes(.int8, [0], []), "scale": floats([1], []),
                    "axis": value(.int32, [], .ints([0])),
                ]), "must be integers"
        ),
        (
            "sparse bits vs data",
            op(
                "constexpr_sparse_to_dense",
                ["nonzero_data": floats([1, 2]), "mask": bytes(.uint8, [0b0000_0111], [1]), "shape": uint32s([8])]),
            "more set bits"
        ),
        (
            "sparse mask bytes",
            op(
                "constexpr_sparse_to_dense",
                ["nonzero_data": floats([1]), "mask": bytes(.uint8, [1], [1]), "shape": uint32s([16])]), "need 2"
        ),
        (
            "sparse18 too few values",
            op(
                "constexpr_sparse_to_dense", iOS18: true,
                ["nonzero_data": floats([1]), "mask": bytes(.uint1, [0b11], [2])]), "more set bits"
        ),
        (
            "shift blocks",
            op(
                "constexpr_blockwise_shift_scale", iOS18: true,
                ["data": bytes(.int8, [1, 2, 3], [3]), "scale": floats([1, 2])]), "do not divide"
        ),
        (
            "shift rank",
            op(
                "constexpr_blockwise_shift_scale", iOS18: true,
                ["data": bytes(.int8, [1, 2], [2]), "scale": floats([1], [1, 1])]), "rank 1"
        ),
        (
            "shift offset shape",
            op(
                "constexpr_blockwise_shift_scale", iOS18: true,
                ["data": bytes(.int8, [1, 2], [2]), "scale": floats([1]), "offset": bytes(.int8, [0, 0], [2])]),
            "must match"
        ),
        (
            "cast not fp16",
            op("constexpr_cast", ["source_val": floats([1]), "output_dtype": value(.string, [], .strings(["fp32"]))]),
            "must be fp16"
        ),
        (
            "cast to int",
            op(
                "constexpr_cast",
                ["source_val": bytes(.float16, [0, 0], [1]), "output_dtype": value(.string, [], .strings(["int32"]))]),
            "not supported"
        ),
        (
            "truncated bytes",
            op(
                "constexpr_cast",
                [
                    "source_val": bytes(.float16, [0, 0, 0], [4]),
                    "output_dtype": value(.string, [], .strings(["fp32"])),
                ]), "truncated"
        ),
        (
            "missing argument", op("constexpr_lut_to_dense", ["lut": floats([1, 2]), "shape": uint32s([1])]),
            "no argument \"indices\""
        ),
        ("unknown op", op("constexpr_not_an_op", [:]), "not a constexpr op"),
        (
            "unbound name",
            MILOperation(
                type: "constexpr_sparse_to_dense",
                inputs: [
                    "nonzero_data": MILArgument(bindings: [.name("nowhere")]),
                    "mask": MILArgument(bindings: [.name("nowhere")]),
                ], outputs: [], blocks: [], attributes: [:]), "\"nowhere\""
        ),
    ]

    @Test("each malformed op throws a ModelFormatError naming the op", arguments: cases.indices)
    func malformed(_ index: Int) throws {
        let (label, operation, fragment) = Self.cases[index]
        let package = try CompressionFixtures.package("cast_ios16")
        do {
            let result = try ConstexprDecompression.decode(operation, in: package, known: [:])
            Issue.record("\(label): decoded to \(result.shape) instead of throwing")
        } catch let error as ModelFormatError {
            #expect(error.message.contains(operation.type), "\(label): \(error)")
            #expect(error.message.contains(fragment), "\(label): \"\(error.message)\" lacks \"\(fragment)\"")
        }
    }

    @Test("a chained argument comes from `known`, and a declared output shape is checked")
    func chainedAndDeclaredShape() throws {
        let package = try CompressionFixtures.package("cast_ios16")
        let lut = DenseConstant(shape: [1, 1, 2, 1], values: [-1, 3])
        var operation = MILOperation(
            type: "constexpr_lut_to_dense",
            inputs: [
                "lut": MILArgument(bindings: [.name("palette")]),
                "indices": MILArgument(bindings: [.value(Self.bytes(.uint1, [0b0110], [1, 4]))]),
            ],
            outputs: [
                MILNamedValueType(
                    name: "w",
                    type: .tensor(MILTensorType(dataType: .float32, rank: 2, dimensions: [.constant(1), .constant(4)])))
            ],
            blocks: [], attributes: [:])
        let dense = try ConstexprDecompression.decode(operation, in: package, known: ["palette": lut])
        #expect(dense == DenseConstant(shape: [1, 4], values: [-1, 3, 3, -1]))
        operation.outputs[0].type = .tensor(MILTensorType(dataType: .float32, rank: 1, dimensions: [.constant(4)]))
        #expect(throws: ModelFormatError.self) {
            try ConstexprDecompression.decode(operation, in: package, known: ["palette": lut])
        }
    }
}

@Suite("Compressed models through the lowering")
struct CompressedModelLoweringTests {
    @Test(
        "every compressed fixture model lowers and runs, its weights decompressed at load",
        arguments: CompressionFixtures.names)
    func lowersAndRuns(_ name: String) throws {
        let package = try CoreMLPackage(contentsOf: Fixtures.url("compression/\(name).mlpackage"))
        let function = try LoweredFunction(package: package, functionName: "main")
        var inputs: [String: MLTensor] = [:]
        for input in function.inputs {
            guard let shape = input.type.tensorType?.shape else {
                Issue.record("input \(input.name) of \(name) has no fixed shape")
                return
            }
            inputs[input.name] = MLTensor(repeating: 1, shape: shape)
        }
        let outputs = try function.run(inputs)
        #expect(outputs.count == function.outputNames.count)
        for output in outputs.values {
            let values = output.cast(to: Float.self).scalars(of: Float.self)
            #expect(values.allSatisfy { $0.isFinite })
        }
    }
}
