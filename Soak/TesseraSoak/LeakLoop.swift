import Foundation
import TesseraModels
import TesseraMultiArray
import TesseraTensor

/// `TesseraSoak leaks [COUNT]`: a loop for a leak checker (`make leaks` runs it under valgrind's
/// memcheck): `COUNT` predictions (stateless, and stateful with a fresh `MLState` every 16
/// steps), a successful load every 100 predictions, and a failing load of each committed
/// fuzz finding as often. Everything it makes is dropped before it returns, so whatever the
/// checker reports as definitely lost leaked.
enum LeakLoop {
    static func run(count: Int, fixtures: URL) throws {
        let statelessURL = fixtures.appendingPathComponent("models/linear_relu_softmax.mlpackage")
        let statefulURL = fixtures.appendingPathComponent("state/accumulator.mlpackage")
        let findings = try FileManager.default.contentsOfDirectory(
            at: fixtures.appendingPathComponent("fuzz/package"), includingPropertiesForKeys: nil)
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-leaks-\(getpid())")
        defer { try? FileManager.default.removeItem(at: scratch) }
        var failedLoads = 0
        do {
            let stateless = try MLModel(contentsOf: statelessURL)
            let stateful = try MLModel(contentsOf: statefulURL)
            var state = stateful.makeState()
            for index in 0..<count {
                _ = try stateless.prediction(from: input("x", (0..<8).map { Float(($0 + index) % 5) }, [1, 8]))
                if index % 16 == 0 { state = stateful.makeState() }
                _ = try stateful.prediction(from: input("x", [0.5, -0.25, 1, 2], [1, 4], fp16: true), using: state)
                if index % 100 == 0 {
                    _ = try MLModel(contentsOf: statelessURL)
                    for finding in findings {
                        let package = try writePackage(try Data(contentsOf: finding), in: scratch)
                        if (try? MLModel(contentsOf: package)) == nil { failedLoads += 1 }
                    }
                }
            }
        }
        print("leaks: \(count) predictions × 2 models, \(count / 100 + 1) loads, \(failedLoads) failing loads")
    }

    static func input(_ name: String, _ values: [Float], _ shape: [Int], fp16: Bool = false)
        -> MLDictionaryFeatureProvider
    {
        let array =
            fp16
            ? MLMultiArray(MLShapedArray<Float16>(scalars: values.map { Float16($0) }, shape: shape))
            : MLMultiArray(MLShapedArray<Float>(scalars: values, shape: shape))
        return MLDictionaryFeatureProvider(features: [name: MLFeatureValue(multiArray: array)])
    }

    /// A `package` fuzz input (`[UInt32 LE n][n bytes of model.mlmodel][weight.bin]`) as a package.
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
}
