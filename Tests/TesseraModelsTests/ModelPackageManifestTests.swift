import Foundation
import Testing
import _TesseraTestSupport

@testable import TesseraModels

@Suite("Model package manifests")
struct ModelPackageManifestTests {
    /// The manifest macOS writes: upper-case UUIDs, items in any order.
    static let macManifest = """
        {
          "fileFormatVersion": "1.0.0",
          "itemInfoEntries": {
            "A4A5BD5C-5A2C-4D3C-8F6B-1A2B3C4D5E6F": {
              "author": "com.apple.CoreML", "description": "CoreML Model Weights",
              "name": "weights", "path": "com.apple.CoreML/weights"
            },
            "0F1E2D3C-4B5A-6978-8796-A5B4C3D2E1F0": {
              "author": "com.apple.CoreML", "description": "CoreML Model Specification",
              "name": "model.mlmodel", "path": "com.apple.CoreML/model.mlmodel"
            }
          },
          "rootModelIdentifier": "0F1E2D3C-4B5A-6978-8796-A5B4C3D2E1F0"
        }
        """

    @Test("the root model and weights are found by identifier and name")
    func resolves() throws {
        let manifest = try ModelPackageManifest(json: Data(Self.macManifest.utf8))
        #expect(manifest.fileFormatVersion == "1.0.0")
        #expect(manifest.rootModel.path == "com.apple.CoreML/model.mlmodel")
        #expect(manifest.weights?.path == "com.apple.CoreML/weights")
    }

    @Test("invalid manifests throw with what is wrong")
    func invalid() {
        let cases: [(String, String)] = [
            ("{", "not valid JSON"),
            ("[]", "not a JSON object"),
            (#"{"itemInfoEntries": {}}"#, "no \"rootModelIdentifier\""),
            (#"{"rootModelIdentifier": "a"}"#, "no \"itemInfoEntries\""),
            (
                #"{"rootModelIdentifier": "a", "itemInfoEntries": {"b": {"path": "m"}}}"#,
                "root model \"a\" is not among"
            ),
            (#"{"rootModelIdentifier": "a", "itemInfoEntries": {"a": {"name": "m"}}}"#, "has no \"path\""),
            (
                #"{"rootModelIdentifier": "a", "itemInfoEntries": {"a": {"path": "../../etc/passwd"}}}"#,
                "leaves the package"
            ),
            (#"{"rootModelIdentifier": "a", "itemInfoEntries": {"a": {"path": "/etc/passwd"}}}"#, "leaves the package"),
        ]
        for (json, message) in cases {
            let error = expectFormatError(.invalidManifest) { _ = try ModelPackageManifest(json: Data(json.utf8)) }
            #expect(error.map { "\($0)".contains(message) } == true, "\(json)")
        }
    }

    @Test("packages without a manifest, missing files and weight references outside the package throw")
    func packageErrors() throws {
        let directory = try TemporaryDirectory()
        expectFormatError(.fileNotFound) {
            _ = try CoreMLPackage(contentsOf: directory.url.appendingPathComponent("none.mlpackage"))
        }
        let empty = directory.url.appendingPathComponent("empty.mlpackage")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        let noManifest = expectFormatError(.fileNotFound) { _ = try CoreMLPackage(contentsOf: empty) }
        #expect(noManifest.map { "\($0)".contains("no Manifest.json") } == true)
        let compiled = directory.url.appendingPathComponent("m.mlmodelc")
        try FileManager.default.createDirectory(at: compiled, withIntermediateDirectories: true)
        let compiledError = expectFormatError(.fileNotFound) { _ = try CoreMLPackage(contentsOf: compiled) }
        #expect(compiledError.map { "\($0)".contains(".mlmodelc") } == true)

        // Model file missing.
        let package = try directory.copy(Fixtures.url("models/linear_relu_softmax.mlpackage"))
        let modelFile = package.appendingPathComponent("Data/com.apple.CoreML/model.mlmodel")
        let modelBytes = try Data(contentsOf: modelFile)
        try FileManager.default.removeItem(at: modelFile)
        expectFormatError(.fileNotFound) { _ = try CoreMLPackage(contentsOf: package) }
        try modelBytes.write(to: modelFile)

        // Weight file missing.
        let weights = package.appendingPathComponent("Data/com.apple.CoreML/weights/weight.bin")
        let weightBytes = try Data(contentsOf: weights)
        try FileManager.default.removeItem(at: weights)
        expectFormatError(.fileNotFound) { _ = try CoreMLPackage(contentsOf: package) }
        try weightBytes.write(to: weights)
        _ = try CoreMLPackage(contentsOf: package)

        #expect(throws: ModelFormatError.self) {
            _ = try CoreMLPackage.weightURL(for: "@model_path/../x.bin", weightsDirectory: package, file: "m")
        }
        #expect(throws: ModelFormatError.self) {
            _ = try CoreMLPackage.weightURL(for: "/etc/passwd", weightsDirectory: package, file: "m")
        }
        #expect(
            try CoreMLPackage.weightURL(for: "@model_path/weights/1-weight.bin", weightsDirectory: package, file: "m")
                == package.appendingPathComponent("1-weight.bin"))
    }
}
