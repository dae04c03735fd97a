import Foundation
import Testing
import _TesseraTestSupport

@testable import TesseraModels

/// Damaged copies of real files must throw ``ModelFormatError`` (or, when the damage happens
/// to leave a valid encoding, decode); they must never crash or read out of bounds.
@Suite("Damaged model files")
struct ModelFormatFuzzTests {
    static let models = ["linear_relu_softmax", "conv_fp32", "classifier", "quantized"]

    /// Decodes `bytes` as a specification; returns whether it threw a format error.
    func decodeFails(_ bytes: [UInt8]) -> Bool {
        do {
            let model = try CoreMLSpec.Model(decoding: Data(bytes), file: "model.mlmodel")
            _ = model.classLabels
            return false
        } catch is ModelFormatError {
            return true
        } catch {
            Issue.record("unexpected error type: \(error)")
            return true
        }
    }

    @Test("every truncation of model.mlmodel throws or decodes", arguments: models)
    func truncations(_ name: String) throws {
        let url = Fixtures.url("models/\(name).mlpackage/Data/com.apple.CoreML/model.mlmodel")
        let bytes = [UInt8](try Data(contentsOf: url))
        var failures = 0
        for length in 0..<bytes.count where decodeFails(Array(bytes[..<length])) {
            failures += 1
        }
        // Cutting inside a field always breaks the encoding; cutting between top-level
        // fields leaves a valid (shorter) message, so not every prefix fails.
        #expect(failures > bytes.count / 2)
    }

    @Test("single-bit flips of model.mlmodel throw or decode", arguments: models)
    func bitFlips(_ name: String) throws {
        let url = Fixtures.url("models/\(name).mlpackage/Data/com.apple.CoreML/model.mlmodel")
        let bytes = [UInt8](try Data(contentsOf: url))
        var failures = 0
        // Two of the eight bits of every byte (all eight take ~7 s in a debug build); the
        // pair rotates so every bit position is hit across the file, including bit 7, the
        // varint continuation bit.
        for index in bytes.indices {
            for bit in [index % 8, (index + 3) % 8] {
                var flipped = bytes
                flipped[index] ^= 1 << bit
                if decodeFails(flipped) { failures += 1 }
            }
        }
        #expect(failures > 0)
    }

    @Test("damaged specs that still decode have their weight references checked")
    func damagedSpecWeights() throws {
        let package = Fixtures.url("models/quantized.mlpackage")
        let modelURL = package.appendingPathComponent("Data/com.apple.CoreML/model.mlmodel")
        let weights = package.appendingPathComponent("Data/com.apple.CoreML/weights")
        let bytes = [UInt8](try Data(contentsOf: modelURL))
        var decoded = 0
        for index in bytes.indices {
            var flipped = bytes
            flipped[index] ^= 1 << (index % 8)
            do {
                let model = try CoreMLSpec.Model(decoding: Data(flipped), file: "model.mlmodel")
                decoded += 1
                _ = try CoreMLPackage.loadWeights(of: model, weightsDirectory: weights, modelURL: modelURL)
            } catch is ModelFormatError {
            }
        }
        #expect(decoded > 0)
    }

    @Test("a truncated or corrupted weight.bin fails the package load")
    func damagedWeights() throws {
        let directory = try TemporaryDirectory()
        let package = try directory.copy(Fixtures.url("models/conv_fp32.mlpackage"))
        let weights = package.appendingPathComponent("Data/com.apple.CoreML/weights/weight.bin")
        let original = [UInt8](try Data(contentsOf: weights))
        for length in stride(from: 0, to: original.count, by: 37) {
            try Data(original[..<length]).write(to: weights)
            expectFormatError(.invalidWeightFile) { _ = try CoreMLPackage(contentsOf: package) }
        }
        // Flip every bit of the header and the first metadata record: each either still
        // describes the same blob (reserved bytes) or throws.
        for index in 0..<128 {
            for bit in 0..<8 {
                var flipped = original
                flipped[index] ^= 1 << bit
                try Data(flipped).write(to: weights)
                do {
                    let loaded = try CoreMLPackage(contentsOf: package)
                    let file = try #require(loaded.weightFiles.values.first)
                    _ = try file.floatValues(of: try file.blob(atMetadataOffset: 64))
                } catch is ModelFormatError {
                }
            }
        }
    }

    @Test("a damaged Manifest.json fails the load with a format error")
    func damagedManifest() throws {
        let directory = try TemporaryDirectory()
        let package = try directory.copy(Fixtures.url("models/classifier.mlpackage"))
        let manifest = package.appendingPathComponent("Manifest.json")
        let original = [UInt8](try Data(contentsOf: manifest))
        for length in stride(from: 0, to: original.count, by: 23) {
            try Data(original[..<length]).write(to: manifest)
            #expect(throws: ModelFormatError.self) { _ = try CoreMLPackage(contentsOf: package) }
        }
    }
}
