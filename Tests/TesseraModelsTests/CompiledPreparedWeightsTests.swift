import Foundation
import TesseraKernels
import TesseraTensor
import Testing
import _TesseraTestSupport

@testable import TesseraModels

/// A compiled model stores its weights' prepared forms (``CompiledPreparedWeights``): loading
/// it maps them, so neither the load nor the first prediction packs a weight, and the outputs
/// are still NumPy's. Files without the section, with another CPU's tag or with a damaged
/// section still load, packing at load.
@Suite("Compiled model: stored prepared weights")
struct CompiledPreparedWeightsTests {
    /// The compiled bytes of fixture `index` of ``WeightPreparationTests/names``.
    static func compiledBytes(_ index: Int) throws -> (name: String, bytes: [UInt8], expected: APIExpected.Case) {
        let (name, expected) = try WeightPreparationTests.fixture(index)
        let compiled = try MLModel.compileModel(at: modelFixture("\(name).mlpackage"))
        defer { try? FileManager.default.removeItem(at: compiled.deletingLastPathComponent()) }
        let data = try Data(contentsOf: compiled.appendingPathComponent(CompiledModelHeader.fileName))
        return (name, [UInt8](data), expected)
    }

    /// The header of compiled bytes.
    static func header(_ bytes: [UInt8]) throws -> CompiledModelHeader {
        try bytes.withUnsafeBytes { try CompiledModelHeader(reading: $0) }
    }

    /// Loads compiled bytes from memory and runs the reference case, counting the weights the
    /// load and the first prediction pack; checks the outputs against NumPy.
    static func loadAndPredict(_ bytes: [UInt8], name: String, expected: APIExpected.Case) async throws -> (
        load: Int, prediction: Int
    ) {
        let (model, loadMisses) = try await PreparedWeights.countingMisses {
            try MLModel(compiledData: Data(bytes), name: "\(name).mlmodelc")
        }
        let (output, predictionMisses) = try await PreparedWeights.countingMisses {
            try await model.prediction(from: try expected.provider())
        }
        for (outputName, want) in expected.outputs {
            let array = try #require(output.featureValue(for: outputName)?.multiArrayValue, "\(outputName)")
            #expect(array.shape.map(\.intValue) == want.shape)
            let got = MLShapedArray<Float>(converting: array).scalars
            #expect(got.count == want.values.count)
            for (g, e) in zip(got, want.values) where abs(Double(g) - e) > 1e-5 + 1e-4 * abs(e) {
                Issue.record("\(name) \(outputName): \(g) vs NumPy \(e)")
                break
            }
        }
        return (loadMisses, predictionMisses)
    }

    /// `bytes` with header bytes `offset..<offset + 8` set to `value` and the checksums repaired.
    static func settingHeader(_ bytes: [UInt8], at offset: Int, to value: UInt64) -> [UInt8] {
        var bytes = bytes
        for index in 0..<8 { bytes[offset + index] = UInt8(truncatingIfNeeded: value >> (8 * index)) }
        return CompiledModelHeader.repairingChecksums(bytes)
    }

    @Test("a compiled model's load and first prediction pack no weight, and match NumPy", arguments: 0..<3)
    func compiledLoadPacksNothing(_ index: Int) async throws {
        let (name, bytes, expected) = try Self.compiledBytes(index)
        let header = try Self.header(bytes)
        let misses = try await Self.loadAndPredict(bytes, name: name, expected: expected)
        #expect(misses.prediction == 0, "\(name): the first prediction packed \(misses.prediction) weights")
        guard WeightPreparationTests.packs else { return }
        #expect(header.prepared.size > 0, "\(name): no prepared-weights section")
        #expect(misses.load == 0, "\(name): the compiled load packed \(misses.load) weights")
    }

    /// Writes compiled bytes as `<name>.mlmodelc/model.tessera` in `scratch`; returns the directory.
    static func write(_ bytes: [UInt8], name: String, in scratch: TemporaryDirectory) throws -> URL {
        let directory = scratch.url.appendingPathComponent("\(name).mlmodelc")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Data(bytes).write(to: directory.appendingPathComponent(CompiledModelHeader.fileName))
        return directory
    }

    @Test(
        "loaded from its directory (checksum alongside decoding and lowering), a compiled model packs no weight",
        arguments: 0..<3)
    func directoryLoadPacksNothing(_ index: Int) async throws {
        let (name, bytes, expected) = try Self.compiledBytes(index)
        let scratch = try TemporaryDirectory()
        let directory = try Self.write(bytes, name: name, in: scratch)
        let (model, loadMisses) = try await PreparedWeights.countingMisses { try MLModel(contentsOf: directory) }
        let (output, predictionMisses) = try await PreparedWeights.countingMisses {
            try await model.prediction(from: try expected.provider())
        }
        #expect(predictionMisses == 0, "\(name): the first prediction packed \(predictionMisses) weights")
        if WeightPreparationTests.packs { #expect(loadMisses == 0, "\(name): the load packed \(loadMisses) weights") }
        for (outputName, want) in expected.outputs {
            let got = MLShapedArray<Float>(
                converting: try #require(output.featureValue(for: outputName)?.multiArrayValue)
            ).scalars
            let worst = zip(got, want.values).map { abs(Double($0) - $1) / (1e-5 + 1e-4 * abs($1)) }.max() ?? 0
            #expect(got.count == want.values.count && worst <= 1, "\(name) \(outputName) against NumPy")
        }
    }

    @Test("many compiled loads at once, each waiting for its checksum, all finish and predict")
    func concurrentLoads() async throws {
        let (name, bytes, expected) = try Self.compiledBytes(0)
        let scratch = try TemporaryDirectory()
        let directory = try Self.write(bytes, name: name, in: scratch)
        // More loads than Dispatch has workers for this machine's cores: each runs on a worker
        // (`MLModel.load`) and waits there for its checksum, which then runs where it can.
        let count = 4 * ProcessInfo.processInfo.activeProcessorCount + 4
        let loaded = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<count {
                group.addTask {
                    let model = try await MLModel.load(contentsOf: directory)
                    let output = try await model.prediction(from: try expected.provider())
                    return output.featureNames.isEmpty ? 0 : 1
                }
            }
            return try await group.reduce(0, +)
        }
        #expect(loaded == count)
    }

    @Test("a damaged prepared form fails the checksum, whether the load waits for it or finishes it later")
    func damagedFormFailsChecksum() throws {
        let (name, bytes, _) = try Self.compiledBytes(0)
        let header = try Self.header(bytes)
        guard header.prepared.size > 0 else { return }
        var damaged = bytes
        damaged[header.prepared.range.upperBound - 5] ^= 0x20  // inside the section
        let scratch = try TemporaryDirectory()
        let directory = try Self.write(damaged, name: name, in: scratch)
        expectModelError(.io, containing: ["fails its checksum", "corrupted"]) {
            _ = try MLModel(contentsOf: directory)
        }
        // Opened without waiting: the package decodes (only the checksum sees the damage), and
        // finishing the verification throws, each time it is asked.
        let package = try ModelSource.open(
            directory, progress: ProgressReporter(handler: nil), deferringVerification: true)
        let verification = try #require(package.contentVerification)
        expectModelError(.io, containing: ["fails its checksum"]) { try verification.finish() }
        expectModelError(.io, containing: ["fails its checksum"]) { try verification.finish() }
        // A symptom met meanwhile becomes the checksum's error.
        let symptom = MLModelError(.generic, "some operation failed")
        #expect((verification.intactOrThrow(symptom) as? MLModelError)?.code == .io)
        // Opened the ordinary way, the checksum has run before the package is returned.
        expectModelError(.io, containing: ["fails its checksum"]) { _ = try ModelSource.open(directory) }
        // The intact file: finishing passes, more than once, and a symptom stays itself.
        let intact = try Self.write(bytes, name: "\(name)-intact", in: scratch)
        let good = try #require(
            try ModelSource.open(intact, progress: ProgressReporter(handler: nil), deferringVerification: true)
                .contentVerification)
        try good.finish()
        try good.finish()
        #expect((good.intactOrThrow(symptom) as? MLModelError)?.code == .generic)
    }

    @Test("stored forms for another CPU, or none (an older file), are ignored: the load packs", arguments: 0..<3)
    func otherCPUOrAbsentPacksAtLoad(_ index: Int) async throws {
        guard WeightPreparationTests.packs else { return }
        let (name, bytes, expected) = try Self.compiledBytes(index)
        let header = try Self.header(bytes)
        try #require(header.prepared.size > 0)
        // Another CPU's tag (the section's bytes 8..<16).
        var otherCPU = bytes
        otherCPU[header.prepared.offset + 8] ^= 0xFF
        otherCPU = CompiledModelHeader.repairingChecksums(otherCPU)
        let other = try await Self.loadAndPredict(otherCPU, name: name, expected: expected)
        #expect(other.load > 0 && other.prediction == 0, "\(name): \(other)")
        // A file as written before the section existed: cut off, header fields zero.
        var older = Array(bytes[..<header.prepared.offset])
        for index in 104..<120 { older[index] = 0 }
        older = CompiledModelHeader.repairingChecksums(older)
        let absent = try await Self.loadAndPredict(older, name: name, expected: expected)
        #expect(absent.load > 0 && absent.prediction == 0, "\(name): \(absent)")
    }

    @Test("a truncated or damaged prepared-weights section is ignored or rejected, never a crash")
    func damagedSection() async throws {
        let (name, bytes, expected) = try Self.compiledBytes(0)
        let header = try Self.header(bytes)
        guard header.prepared.size > 0 else { return }
        let section = header.prepared
        var variants: [[UInt8]] = []
        // The file cut inside the section, its size and checksums repaired (the header's
        // section then overruns the file).
        for cut in stride(from: section.offset, to: section.range.upperBound, by: max(1, section.size / 7)) {
            variants.append(CompiledModelHeader.repairingChecksums(Array(bytes[..<cut])))
        }
        // The section's declared size cut short, so records or data overrun it.
        for size in [0, 8, 31, 32, 79, 80, section.size / 2, section.size - 1] {
            variants.append(Self.settingHeader(bytes, at: 112, to: UInt64(size)))
        }
        // An unaligned or out-of-bounds section offset.
        variants.append(Self.settingHeader(bytes, at: 104, to: UInt64(section.offset + 4)))
        variants.append(Self.settingHeader(bytes, at: 104, to: UInt64.max - 63))
        // Damaged records: every field of the first record set to extreme values.
        for field in stride(from: 32, to: 80, by: 8) {
            for value: UInt64 in [0, 1, 3, 1 << 40, UInt64.max] {
                var damaged = bytes
                for index in 0..<8 {
                    damaged[section.offset + field + index] = UInt8(truncatingIfNeeded: value >> (8 * index))
                }
                variants.append(CompiledModelHeader.repairingChecksums(damaged))
            }
        }
        // A huge form count.
        var counted = bytes
        for index in 0..<8 { counted[section.offset + 16 + index] = 0xFF }
        variants.append(CompiledModelHeader.repairingChecksums(counted))
        for variant in variants {
            // Loading throws or succeeds; a model that loads still predicts.
            guard let model = try? MLModel(compiledData: Data(variant), name: "\(name).mlmodelc") else { continue }
            _ = try? await model.prediction(from: try expected.provider())
        }
        // An intact section still loads after all that.
        let misses = try await Self.loadAndPredict(bytes, name: name, expected: expected)
        #expect(misses.prediction == 0)
    }

    @Test("the section decodes only with its own CPU tag, and only whole")
    func sectionDecoding() throws {
        let (_, bytes, _) = try Self.compiledBytes(1)
        let header = try Self.header(bytes)
        guard header.prepared.size > 0 else { return }
        // Page-aligned, as a mapping is (the forms' data must be 64-byte aligned in memory).
        let mapped = MappedFile(copying: Data(bytes))
        try withExtendedLifetime(mapped) {
            let file = mapped.bytes
            let forms = try #require(
                CompiledPreparedWeights.decode(header.prepared, of: file, weights: header.weights))
            #expect(!forms.isEmpty)
            #expect(forms.allSatisfy { header.weights.range.contains($0.form.weightOffset) })
            #expect(
                CompiledPreparedWeights.decode(
                    header.prepared, of: file, weights: header.weights, tag: PreparedWeights.layoutTag ^ 1) == nil)
            var short = header.prepared
            short.size = CompiledPreparedWeights.headerSize + CompiledPreparedWeights.recordSize * forms.count - 1
            #expect(CompiledPreparedWeights.decode(short, of: file, weights: header.weights) == nil)
        }
    }
}
