import Foundation
import Testing
import _TesseraTestSupport

@testable import TesseraModels

/// The inputs the libFuzzer targets found (`Tests/Fixtures/fuzz/<target>/`), replayed as the
/// targets run them (`Fuzz/TesseraFuzz`), so no finding comes back.
@Suite("Fuzz findings")
struct FuzzFindingTests {
    /// The committed findings of one target.
    static func findings(_ target: String) throws -> [URL] {
        let directory = Fixtures.url("fuzz/\(target)")
        return try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
    }

    /// Writes a `package` target input (`[UInt32 LE n][n bytes of model.mlmodel][weight.bin]`)
    /// as a package under `directory`, with the manifest the target writes.
    static func writePackage(_ input: Data, in directory: URL) throws -> URL {
        let bytes = [UInt8](input)
        let count = bytes.count < 4 ? 0 : (0..<4).reduce(0) { $0 | Int(bytes[$1]) << (8 * $1) }
        let end = min(bytes.count, 4 + count)
        let package = directory.appendingPathComponent("Model.mlpackage")
        let data = package.appendingPathComponent("Data/com.apple.CoreML")
        try FileManager.default.createDirectory(
            at: data.appendingPathComponent("weights"), withIntermediateDirectories: true)
        try Data(bytes[min(4, end)..<end]).write(to: data.appendingPathComponent("model.mlmodel"))
        try Data(bytes[end...]).write(to: data.appendingPathComponent("weights/weight.bin"))
        let manifest = """
            {"fileFormatVersion": "1.0.0", "itemInfoEntries": {
              "A": {"author": "com.apple.CoreML", "name": "model.mlmodel", "path": "com.apple.CoreML/model.mlmodel"},
              "B": {"author": "com.apple.CoreML", "name": "weights", "path": "com.apple.CoreML/weights"}},
             "rootModelIdentifier": "A"}
            """
        try Data(manifest.utf8).write(to: package.appendingPathComponent("Manifest.json"))
        return package
    }

    /// Loads the committed `package` finding whose name starts with `prefix` with
    /// `configuration` and predicts on its small inputs, as the target does; the prediction's
    /// error (recorded as an issue when it does not throw `MLModelError`).
    static func predictionError(finding prefix: String, configuration: MLModelConfiguration) throws -> MLModelError? {
        let input = try #require(try findings("package").first { $0.lastPathComponent.hasPrefix(prefix) })
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fuzz-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let package = try writePackage(try Data(contentsOf: input), in: directory)
        let model = try MLModel(contentsOf: package, configuration: configuration)
        let features = try #require(model.modelDescription.smallInputs)
        return #expect(throws: MLModelError.self, "\(prefix)") {
            try model.prediction(from: MLDictionaryFeatureProvider(features: features))
        }
    }

    /// Loads the committed `package` finding whose name starts with `prefix` with
    /// `configuration`; the load's error (recorded as an issue when it does not throw
    /// `MLModelError`).
    static func loadError(finding prefix: String, configuration: MLModelConfiguration) throws -> MLModelError? {
        let input = try #require(try findings("package").first { $0.lastPathComponent.hasPrefix(prefix) })
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fuzz-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let package = try writePackage(try Data(contentsOf: input), in: directory)
        return #expect(throws: MLModelError.self, "\(prefix)") {
            try MLModel(contentsOf: package, configuration: configuration)
        }
    }

    /// The resident set size in bytes (`/proc/self/statm`).
    static func residentBytes() -> Int {
        let text = (try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8)) ?? ""
        let pages = text.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    /// What a leak grows: the live heap under AddressSanitizer
    /// (`__sanitizer_get_current_allocated_bytes`; its quarantine keeps freed memory resident, so
    /// the resident set grows there without a leak), else the resident set.
    static func retainedBytes() -> Int {
        guard let symbol = dlsym(nil, "__sanitizer_get_current_allocated_bytes") else { return residentBytes() }
        return unsafeBitCast(symbol, to: (@convention(c) () -> Int).self)()
    }

    /// As the target runs them: the load (with the target's configuration,
    /// `MLModelConfiguration.fuzzTarget`), then, when it succeeds, one prediction on the
    /// target's small inputs (`MLModelDescription.smallInputs`).
    @Test("every package finding fails with a typed error, at the load or at the prediction")
    func packageFindings() throws {
        let inputs = try Self.findings("package")
        #expect(!inputs.isEmpty)
        for input in inputs {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fuzz-\(UUID())")
            defer { try? FileManager.default.removeItem(at: directory) }
            let package = try Self.writePackage(try Data(contentsOf: input), in: directory)
            #expect(throws: MLModelError.self, "\(input.lastPathComponent)") {
                let model = try MLModel(contentsOf: package, configuration: .fuzzTarget)
                let features = try #require(model.modelDescription.smallInputs)
                _ = try model.prediction(from: MLDictionaryFeatureProvider(features: features))
            }
        }
    }

    /// As the `compiled` target runs them: checksums repaired, then a load from memory.
    /// `crash-f037da9b…` is a compiled model whose int32 constant holds a float immediate out
    /// of Int32's range; decoding it trapped converting the value.
    @Test("every compiled finding fails to load with a typed error")
    func compiledFindings() throws {
        let inputs = try Self.findings("compiled")
        #expect(!inputs.isEmpty)
        for input in inputs {
            let bytes = CompiledModelHeader.repairingChecksums([UInt8](try Data(contentsOf: input)))
            #expect(throws: MLModelError.self, "\(input.lastPathComponent)") {
                try MLModel(compiledData: Data(bytes), name: "Model.mlmodelc")
            }
        }
    }

    /// `crash-20ba6ce3…`: a NeuralNetwork whose output `y` is declared int64 computes NaN; the
    /// prediction trapped converting it to Int64.
    @Test("an int64 output that computes NaN or a value beyond Int64 throws .generic naming it")
    func int64OutputOutOfRange() throws {
        let error = try Self.predictionError(finding: "crash-20ba6ce3", configuration: MLModelConfiguration())
        #expect(error?.code == .generic)
        #expect(error?.localizedDescription.contains("output 'y'") == true, "\(String(describing: error))")
    }

    @Test("an empty model.mlmodel is read as empty and refused: it sets no model type")
    func emptySpecification() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fuzz-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = try #require(try Self.findings("package").first { $0.lastPathComponent.hasPrefix("leak-e6d08f9e") })
        let package = try Self.writePackage(try Data(contentsOf: input), in: directory)
        let spec = package.appendingPathComponent("Data/com.apple.CoreML/model.mlmodel")
        #expect(try Data(readingFile: spec).isEmpty)
        #expect {
            try MLModel(contentsOf: package)
        } throws: { error in
            (error as? MLModelError)?.code == .generic
                && "\(error)".contains("model.mlmodel: the specification sets no model type")
        }
    }

    /// leak-e6d08f9e…: its `model.mlmodel` is empty, and Foundation's `Data(contentsOf:)` on
    /// Linux leaks a 4 KiB buffer for every empty file it reads, each one touching a page of its
    /// own (its `malloc` header). 4,000 loads would leak 16 MiB; the resident set (in a process
    /// of its own, so no other test's allocations count; the live heap under AddressSanitizer,
    /// ``retainedBytes()``) must grow by less than 4 MiB.
    @Test("loading a package with an empty model.mlmodel leaks nothing (leak-e6d08f9e…)")
    func emptySpecificationLeaksNothing() async {
        await #expect(processExitsWith: .success) {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fuzz-\(UUID())")
            defer { try? FileManager.default.removeItem(at: directory) }
            let input = Fixtures.url("fuzz/package/leak-e6d08f9e039683f4a26705d051955ee870c7335d")
            let package = try FuzzFindingTests.writePackage(try Data(contentsOf: input), in: directory)
            for _ in 0..<50 { _ = try? MLModel(contentsOf: package) }
            let before = FuzzFindingTests.retainedBytes()
            for _ in 0..<4_000 { _ = try? MLModel(contentsOf: package) }
            let growth = FuzzFindingTests.retainedBytes() - before
            if growth >= 4 << 20 {
                print("the retained memory grew by \(growth) bytes over 4,000 failing loads")
                exit(1)
            }
        }
    }
}

extension FuzzFindingTests {
    /// `slow-unit-0ca8d8d2…` (68 bytes): a NeuralNetwork `rangeDynamic` from 1.5e-5 to its
    /// input by 7.5e-9, 67 million elements made on the host: 10 s per execution under the
    /// memory limit of 4 MiB, which did not count them.
    @Test("a range made on the host beyond the model's memory limit throws naming the limit (slow-unit-0ca8d8d2…)")
    func hostRangeBeyondMemoryLimit() throws {
        let error = try Self.predictionError(finding: "slow-unit-0ca8d8d2", configuration: .fuzzTarget)
        #expect(error?.code == .generic)
        let message = error?.localizedDescription ?? ""
        #expect(message.contains("rangeDynamic") && message.contains("MLModelConfiguration.memoryLimit"), "\(message)")
    }
}

extension FuzzFindingTests {
    /// `crash-fcf6209e…` (482 bytes): a scikit-learn logistic regression whose class labels were
    /// cut to one (`[249]`) with its single weight row; the two-class path wrote the second
    /// probability past the end of a one-element array.
    @Test("a GLM classifier with one class label fails to load naming the labels (crash-fcf6209e…)")
    func glmClassifierWithOneLabel() throws {
        let error = try Self.loadError(finding: "crash-fcf6209e", configuration: MLModelConfiguration())
        let message = error?.localizedDescription ?? ""
        #expect(message.contains("a GLM classifier needs at least two class labels; this one has 1"), "\(message)")
    }

    /// `crash-2e8c70b1…` (88 bytes): a NeuralNetwork `batchedMatmul` of two inputs with
    /// `transposeA`, fed a scalar `x` (its input declares no shape); building the permutation
    /// that swaps the last two axes of a rank-0 tensor trapped.
    @Test("a two-input batchedMatmul fed a scalar throws naming the layer (crash-2e8c70b1…)")
    func batchedMatMulOfScalar() throws {
        let error = try Self.predictionError(finding: "crash-2e8c70b1", configuration: MLModelConfiguration())
        let message = error?.localizedDescription ?? ""
        #expect(message.contains("m: batchedMatMul takes inputs of rank 1 or more"), "\(message)")
    }
}

extension FuzzFindingTests {
    /// `oom-6283c375…` (104 bytes): a NeuralNetwork 3-D average pool with 466 million planes of
    /// front padding. The depth window was summed tap by tap and divided by a per-plane count
    /// made on the host: a 1.9 GB array before the graph's memory limit could see anything. The
    /// depth window is now a 2-D pool over `[N, C, D, H·W]`, whose output shape the load's check
    /// on the declared input shape refuses.
    @Test("a 3-D pool padded by hundreds of millions of planes fails to load naming its output (oom-6283c375…)")
    func pool3dHugeDepthPadding() throws {
        let error = try Self.loadError(finding: "oom-6283c375", configuration: .fuzzTarget)
        #expect(error?.code == .generic)
        let message = error?.localizedDescription ?? ""
        #expect(
            message.contains("operation 'p' (op type 'pooling3d') would produce [1, 4, 466313082, 3, 6]"), "\(message)")
    }
}
