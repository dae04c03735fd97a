import Foundation
import Synchronization
import TesseraMultiArray
import TesseraTensor
import Testing
import _TesseraTestSupport

@testable import TesseraModels

@Suite("Compiled models: format, round trip, refusal, progress")
struct CompiledModelTests {
    /// Compiles `name` into `scratch` and returns the compiled directory.
    func compile(_ name: String, into scratch: TemporaryDirectory) throws -> URL {
        let compiled = try MLModel.compileModel(at: modelFixture(name))
        let destination = scratch.url.appendingPathComponent(compiled.lastPathComponent)
        try FileManager.default.moveItem(at: compiled, to: destination)
        try? FileManager.default.removeItem(at: compiled.deletingLastPathComponent())
        return destination
    }

    /// The compiled file inside a compiled directory.
    func file(_ compiled: URL) -> URL { compiled.appendingPathComponent("model.tessera") }

    /// A prediction's multi-array outputs as Float arrays.
    func outputs(_ model: MLModel, _ input: any MLFeatureProvider) throws -> [String: [Float]] {
        let output = try model.prediction(from: input)
        var result: [String: [Float]] = [:]
        for name in output.featureNames {
            if let array = output.featureValue(for: name)?.multiArrayValue {
                result[name] = MLShapedArray<Float>(converting: array).scalars
            }
        }
        return result
    }

    @Test("a compiled model predicts exactly as its package, and still loads after a move")
    func roundTrip() throws {
        let scratch = try TemporaryDirectory()
        let compiled = try compile("linear_relu_softmax.mlpackage", into: scratch)
        let contents = try FileManager.default.contentsOfDirectory(atPath: compiled.path)
        #expect(contents == ["model.tessera"])
        let moved = scratch.url.appendingPathComponent("elsewhere/Moved.mlmodelc")
        try FileManager.default.createDirectory(
            at: moved.deletingLastPathComponent(), withIntermediateDirectories: true)
        try FileManager.default.moveItem(at: compiled, to: moved)
        let package = try MLModel(contentsOf: modelFixture("linear_relu_softmax.mlpackage"))
        let model = try MLModel(contentsOf: moved)
        let input = try MLDictionaryFeatureProvider(dictionary: [
            "x": MLFeatureValue(
                shapedArray: MLShapedArray<Float>(scalars: (0..<8).map { Float($0) / 7 - 0.5 }, shape: [1, 8]))
        ])
        #expect(try outputs(model, input) == outputs(package, input))
        #expect(model.modelDescription.inputOrder == package.modelDescription.inputOrder)
    }

    @Test("the digits classifier compiles and classifies every sample as its package does")
    func digits() throws {
        let scratch = try TemporaryDirectory()
        let compiled = scratch.url.appendingPathComponent("Digits.mlmodelc")
        try FileManager.default.moveItem(at: try MLModel.compileModel(at: DigitsDemo.packageURL), to: compiled)
        let model = try MLModel(contentsOf: compiled)
        for sample in DigitsDemo.samples.samples.prefix(20) {
            let output = try model.prediction(from: DigitsDemo.input(sample))
            #expect(output.featureValue(for: "classLabel")?.stringValue == sample.label)
        }
    }

    @Test("fp16 constants are widened to fp32 with the same values; other blobs are copied as they are")
    func widenedWeights() throws {
        let scratch = try TemporaryDirectory()
        for name in ["conv_fp16", "conv_fp32", "quantized"] {
            let compiled = try compile("\(name).mlpackage", into: scratch)
            let source = try ModelSource.open(modelFixture("\(name).mlpackage"))
            let target = try ModelSource.open(compiled)
            let sourceOps = try source.model.requireMLProgram(file: name).function().block().operations
            let targetOps = try target.model.requireMLProgram(file: name).function().block().operations
            #expect(sourceOps.count == targetOps.count)
            var blobs = 0
            for (a, b) in zip(sourceOps, targetOps) {
                for (key, va) in a.attributes {
                    guard let ra = va.blobReference, let vb = b.attributes[key], let rb = vb.blobReference,
                        let ta = va.type?.tensorType, let tb = vb.type?.tensorType
                    else { continue }
                    blobs += 1
                    let (fa, ba) = try source.blob(for: ra, type: ta)
                    let (fb, bb) = try target.blob(for: rb, type: tb)
                    #expect(try fa.floatValues(of: ba) == fb.floatValues(of: bb))
                    if a.type == "const" && ta.dataType == .float16 {
                        #expect(tb.dataType == .float32)
                        #expect(b.outputs.first?.type.tensorType?.dataType == .float32)
                    } else {
                        #expect(tb.dataType == ta.dataType, "\(a.type).\(key)")
                    }
                    fb.withUnsafeBytes(of: bb) { #expect(Int(bitPattern: $0.baseAddress) % 64 == 0) }
                    if tb.dataType == .float32 {
                        // Float32 weights (widened ones too) come back as tensors over the mapping.
                        let tensor = try #require(try target.mappedFloat32Tensor(for: rb, type: tb))
                        #expect(tensor.shapedArray(of: Float.self).scalars == (try fa.floatValues(of: ba)))
                    }
                }
            }
            #expect(blobs > 0, "\(name)")
        }
    }

    @Test("a compiled file of another format version is refused as stale")
    func stale() throws {
        let scratch = try TemporaryDirectory()
        let compiled = try compile("classifier.mlpackage", into: scratch)
        var data = try Data(contentsOf: file(compiled))
        data[8] = 3
        try data.write(to: file(compiled))
        expectModelError(.io, containing: ["format version 3", "reads format version 2", "recompile"]) {
            _ = try MLModel(contentsOf: compiled)
        }
    }

    @Test("truncated, bit-flipped or foreign compiled files are refused, never trusted")
    func corrupted() throws {
        let scratch = try TemporaryDirectory()
        let compiled = try compile("classifier.mlpackage", into: scratch)
        let original = try Data(contentsOf: file(compiled))

        try original.prefix(original.count - 100).write(to: file(compiled))
        expectModelError(.io, containing: ["truncated", "recompile"]) { _ = try MLModel(contentsOf: compiled) }
        try original.prefix(50).write(to: file(compiled))
        expectModelError(.io, containing: ["truncated"]) { _ = try MLModel(contentsOf: compiled) }

        var flipped = original
        flipped[flipped.count - 7] ^= 0x10  // inside the weights
        try flipped.write(to: file(compiled))
        expectModelError(.io, containing: ["checksum", "corrupted"]) { _ = try MLModel(contentsOf: compiled) }

        flipped = original
        flipped[200] ^= 0x01  // inside the specification
        try flipped.write(to: file(compiled))
        expectModelError(.io, containing: ["checksum", "corrupted"]) { _ = try MLModel(contentsOf: compiled) }

        flipped = original
        flipped[60] ^= 0x01  // a section offset in the header
        try flipped.write(to: file(compiled))
        expectModelError(.io, containing: ["header", "checksum"]) { _ = try MLModel(contentsOf: compiled) }

        flipped = original
        flipped[0] = UInt8(ascii: "X")
        try flipped.write(to: file(compiled))
        expectModelError(.io, containing: ["magic"]) { _ = try MLModel(contentsOf: compiled) }

        // Random damage anywhere must throw, never crash.
        var generator = SeededRandom(seed: 42)
        for _ in 0..<40 {
            var damaged = original
            let position = Int.random(in: 0..<damaged.count, using: &generator)
            damaged[position] ^= UInt8.random(in: 1...255, using: &generator)
            try damaged.write(to: file(compiled))
            #expect(throws: MLModelError.self) { _ = try MLModel(contentsOf: compiled) }
        }
    }

    @Test("a damaged weight record behind valid checksums is refused at load, naming the blob")
    func damagedBlobRecord() throws {
        let scratch = try TemporaryDirectory()
        let compiled = try compile("classifier.mlpackage", into: scratch)
        let original = try [UInt8](Data(contentsOf: file(compiled)))
        let header = try original.withUnsafeBytes { try CompiledModelHeader(reading: $0) }
        // The weights section's first blob record starts 64 bytes in, with its sentinel.
        let record = header.weights.offset + 64
        #expect(original[record..<record + 4] == [0xEF, 0xBE, 0xAD, 0xDE])

        // Opening the file checks every blob the program references (those of functions a load
        // does not lower too); the load's lowering checks the blobs it adopts again.
        var damaged = original
        damaged[record] ^= 0x01
        try Data(CompiledModelHeader.repairingChecksums(damaged)).write(to: file(compiled))
        expectModelError(.io, containing: ["sentinel", "corrupted"]) { _ = try ModelSource.open(compiled) }
        expectModelError(.io, containing: ["sentinel", "corrupted"]) { _ = try MLModel(contentsOf: compiled) }

        damaged = original
        damaged[record + 8] &+= 4  // the blob's size: no longer what the constant's type needs
        try Data(CompiledModelHeader.repairingChecksums(damaged)).write(to: file(compiled))
        expectModelError(.io, containing: ["blob at offset 64", "bytes but a"]) { _ = try ModelSource.open(compiled) }

        try Data(original).write(to: file(compiled))
        _ = try ModelSource.open(compiled)
        _ = try MLModel(contentsOf: compiled)
    }

    @Test("compile and load report their phases and bytes")
    func progress() throws {
        let scratch = try TemporaryDirectory()
        let compileReports = Mutex<[MLModelProgress]>([])
        let compiled = try MLModel.compileModel(at: modelFixture("conv_fp16.mlpackage")) { report in
            compileReports.withLock { $0.append(report) }
        }
        let destination = scratch.url.appendingPathComponent("Conv.mlmodelc")
        try FileManager.default.moveItem(at: compiled, to: destination)
        let phases = compileReports.withLock { $0.map(\.phase) }
        #expect(phases.first == .reading && phases.last == .done)
        #expect(phases.contains(.packingWeights) && phases.contains(.writing))
        let packed = compileReports.withLock { $0.last { $0.phase == .packingWeights } }
        #expect(packed.map { $0.completedBytes == $0.totalBytes && $0.totalBytes > 0 } == true)

        let loadReports = Mutex<[MLModelProgress]>([])
        let model = try? MLModel(contentsOf: destination, configuration: MLModelConfiguration()) { report in
            loadReports.withLock { $0.append(report) }
        }
        _ = model  // conv may not lower yet; the reading and verifying phases come first either way
        let loadPhases = loadReports.withLock { $0.map(\.phase) }
        #expect(Array(loadPhases.prefix(2)) == [.reading, .verifying])
        #expect(loadPhases.contains(.parsing))
        let verified = loadReports.withLock { $0.last { $0.phase == .verifying } }
        #expect(verified.map { $0.fractionCompleted == 1 && $0.totalBytes > 0 } == true)
    }

    @Test("configuration.functionName selects a function of a multi-function model, compiled or not")
    func multiFunction() throws {
        struct Expected: Decodable {
            struct Input: Decodable {
                var name: String
                var shape: [Int]
                var values: [Float]
            }
            struct Output: Decodable {
                var output: String
                var values: [Float]
            }
            var input: Input
            var functions: [String: Output]
        }
        let expected = try JSONDecoder().decode(
            Expected.self, from: Data(contentsOf: modelFixture("multifunction.json")))
        let input = try MLDictionaryFeatureProvider(dictionary: [
            expected.input.name: MLFeatureValue(
                shapedArray: MLShapedArray<Float>(scalars: expected.input.values, shape: expected.input.shape))
        ])
        let scratch = try TemporaryDirectory()
        let compiled = try compile("multifunction.mlpackage", into: scratch)
        for url in [modelFixture("multifunction.mlpackage"), compiled] {
            for (name, output) in expected.functions {
                let configuration = MLModelConfiguration()
                configuration.functionName = name
                let model = try MLModel(contentsOf: url, configuration: configuration)
                let got = try outputs(model, input)[output.output] ?? []
                #expect(got.count == output.values.count)
                for (a, b) in zip(got, output.values) { #expect(abs(a - b) <= 1e-5 * max(1, abs(b)), "\(name)") }
            }
            // nil runs the default function, main.
            let model = try MLModel(contentsOf: url)
            let got = try outputs(model, input)["y"] ?? []
            #expect(zip(got, expected.functions["main"]!.values).allSatisfy { abs($0 - $1) <= 1e-5 })

            let configuration = MLModelConfiguration()
            configuration.functionName = "missing"
            expectModelError(.io, containing: ["\"missing\"", "\"main\"", "\"scaled\""]) {
                _ = try MLModel(contentsOf: url, configuration: configuration)
            }
        }
    }

    @Test("an unknown function of a single-function model names the one it has")
    func unknownFunction() {
        let configuration = MLModelConfiguration()
        configuration.functionName = "encode"
        expectModelError(.io, containing: ["\"encode\"", "\"main\""]) {
            _ = try MLModel(contentsOf: modelFixture("linear_relu_softmax.mlpackage"), configuration: configuration)
        }
    }
}
