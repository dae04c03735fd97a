import Foundation
import TesseraModels
import TesseraMultiArray
import TesseraProtobuf
import _TesseraTestSupport

/// One parser of outside data, driven by arbitrary bytes. Every error a parser throws is an
/// accepted outcome; a trap, a sanitizer report or a hang is a finding.
struct FuzzTarget: Sendable {
    /// The name `make fuzz TARGET=…` takes.
    let name: String
    /// What the bytes are.
    let summary: String
    /// Runs the parser on one input.
    let run: @Sendable (Data) -> Void
    /// The seed inputs, from the test fixtures under `fixtures` (the repository's `Tests/Fixtures`).
    let seeds: @Sendable (_ fixtures: URL) throws -> [Data]

    static let all: [FuzzTarget] = [protobuf, manifest, spec, weights, package, compiled, npy, png, jpeg]

    static func named(_ name: String) -> FuzzTarget? { all.first { $0.name == name } }

    /// The ML-program packages whose files seed the model targets.
    static let seedPackages = [
        "models/linear_relu_softmax.mlpackage", "models/conv_fp32.mlpackage", "models/classifier.mlpackage",
        "models/quantized.mlpackage", "models/flexible_shapes.mlpackage", "state/accumulator.mlpackage",
        "rank0/torch_einsum_flexible/model.mlpackage", "lowering/transformer_block/model.mlpackage",
    ]

    static func packageFile(_ fixtures: URL, _ package: String, _ file: String) -> URL {
        fixtures.appendingPathComponent(package).appendingPathComponent("Data/com.apple.CoreML")
            .appendingPathComponent(file)
    }

    /// The `model.mlmodel` seeds: the ML programs' specs, then the NeuralNetwork and classic
    /// models' files (``modelFileSeeds(_:)``).
    static func specSeeds(_ fixtures: URL) throws -> [Data] {
        try seedPackages.map { try Data(contentsOf: packageFile(fixtures, $0, "model.mlmodel")) }
            + modelFileSeeds(fixtures)
    }

    /// The NeuralNetwork fixtures' `model.mlmodel` files (`neuralnetwork/*/`, and the image
    /// models in `images/`) and the classic models (`classic/*.mlmodel`, scikit-learn, libsvm,
    /// XGBoost and hand-written specs, the deliberately bad ones included), each at most 16 KiB.
    static func modelFileSeeds(_ fixtures: URL) -> [Data] {
        let manager = FileManager.default
        var urls: [URL] = []
        let networks = fixtures.appendingPathComponent("neuralnetwork")
        for name in ((try? manager.contentsOfDirectory(atPath: networks.path)) ?? []).sorted() {
            urls.append(networks.appendingPathComponent(name).appendingPathComponent("model.mlmodel"))
        }
        for directory in ["images", "classic"] {
            let folder = fixtures.appendingPathComponent(directory)
            for name in ((try? manager.contentsOfDirectory(atPath: folder.path)) ?? []).sorted()
            where name.hasSuffix(".mlmodel") {
                urls.append(folder.appendingPathComponent(name))
            }
        }
        return urls.compactMap { url in
            guard let data = try? Data(contentsOf: url), data.count <= 16 << 10 else { return nil }
            return data
        }
    }

    static func weightSeeds(_ fixtures: URL) -> [Data] {
        seedPackages.compactMap { try? Data(contentsOf: packageFile(fixtures, $0, "weights/weight.bin")) }
    }

    /// The protobuf wire format alone: every field read, every length-delimited field also
    /// tried as a nested message (the reader's depth limit bounds the recursion).
    static let protobuf = FuzzTarget(
        name: "protobuf", summary: "any protobuf message (ProtobufReader)",
        run: { data in
            data.withUnsafeBytes { buffer in
                var reader = ProtobufReader(buffer)
                _ = try? walk(&reader)
            }
        }, seeds: specSeeds)

    static func walk(_ reader: inout ProtobufReader) throws {
        while let tag = try reader.nextField() {
            if tag.wireType == .lengthDelimited {
                var child = try reader.readMessage()
                _ = try? walk(&child)
            } else {
                try reader.skipField()
            }
        }
    }

    /// `Manifest.json` and the root model and weights it resolves to.
    static let manifest = FuzzTarget(
        name: "manifest", summary: "an .mlpackage's Manifest.json (ModelPackageManifest)",
        run: { data in
            guard let manifest = try? ModelPackageManifest(json: data) else { return }
            _ = manifest.rootModel.path
            _ = manifest.weights?.path
        },
        seeds: { fixtures in
            try seedPackages.map { try Data(contentsOf: fixtures.appendingPathComponent("\($0)/Manifest.json")) }
        })

    /// The Core ML specification (`model.mlmodel`): the model, its description and, for an ML
    /// program, the MIL program and its blob references.
    static let spec = FuzzTarget(
        name: "spec", summary: "a Core ML specification, model.mlmodel (CoreMLSpec.Model, MLModelDescription)",
        run: { data in
            guard let model = try? CoreMLSpec.Model(decoding: data, file: "model.mlmodel") else { return }
            _ = model.classLabels
            _ = try? MLModelDescription(model, functionName: nil)
            try? model.mlProgram?.forEachBlobReference { _, _ in }
        }, seeds: specSeeds)

    /// `weight.bin`: its header, every blob record and the blobs' values.
    static let weights = FuzzTarget(
        name: "weights", summary: "a weight.bin file (WeightFile)",
        run: { data in
            guard let file = try? WeightFile(data: data), let blobs = try? file.allBlobs() else { return }
            for blob in blobs.prefix(64) { _ = try? file.floatValues(of: blob) }
        }, seeds: { weightSeeds($0) })

    /// A whole package loaded by `MLModel` from memory (decoding, weight references, lowering
    /// and the load-time build on the declared shapes; an ML program, a NeuralNetwork or a
    /// classic model), then one prediction on small made-up inputs (`MLModelDescription.smallInputs`),
    /// which is what reaches a classic model's evaluation. The input is `[UInt32 LE
    /// n][n bytes of model.mlmodel][weight.bin]`; nothing is written to disk (the in-memory
    /// load, `MLModel(modelData:weightFiles:name:)`, does everything a load from a directory
    /// does after reading the files). The model is loaded with a 4 MiB
    /// `MLModelConfiguration.memoryLimit` (`MLModelConfiguration.fuzzTarget`), so a mutation
    /// whose prediction would compute hundreds of megabytes meets the memory cap (a path worth
    /// fuzzing too) instead of taking most of the run's time in kernels.
    static let package = FuzzTarget(
        name: "package", summary: "an .mlpackage: model.mlmodel + weight.bin, loaded by MLModel, one prediction",
        run: { data in
            let (specBytes, weightBytes) = split(data)
            guard
                let model = try? MLModel(
                    modelData: specBytes, weightFiles: ["weight.bin": weightBytes], name: "Model.mlpackage",
                    configuration: .fuzzTarget),
                let inputs = model.modelDescription.smallInputs
            else { return }
            _ = try? model.prediction(from: MLDictionaryFeatureProvider(features: inputs))
        },
        seeds: { fixtures in
            try seedPackages.map { package in
                let spec = try Data(contentsOf: packageFile(fixtures, package, "model.mlmodel"))
                let weights = (try? Data(contentsOf: packageFile(fixtures, package, "weights/weight.bin"))) ?? Data()
                return join(spec, weights)
            } + modelFileSeeds(fixtures).map { join($0, Data()) }
        })

    /// A model compiled by Tessera (`model.tessera`), loaded by `MLModel` from memory
    /// (`MLModel(compiledData:name:)`). The harness rewrites the size and both checksums first,
    /// so mutations reach the sections behind them.
    static let compiled = FuzzTarget(
        name: "compiled", summary: "a compiled model, model.tessera (CompiledModelReader)",
        run: { data in
            let bytes = Data(CompiledModelHeader.repairingChecksums([UInt8](data)))
            _ = try? MLModel(compiledData: bytes, name: "Model.mlmodelc")
        },
        seeds: { fixtures in
            try seedPackages.prefix(5).map { package in
                let url = try MLModel.compileModel(at: fixtures.appendingPathComponent(package))
                defer { try? FileManager.default.removeItem(at: url) }
                return try Data(contentsOf: url.appendingPathComponent(CompiledModelHeader.fileName))
            }
        })

    /// A `.npy` file (the CLI's inputs).
    static let npy = FuzzTarget(
        name: "npy", summary: "a NumPy .npy file (NumPyArray)",
        run: { data in
            guard let array = try? NumPyArray(data: data) else { return }
            _ = array.doubles
        },
        seeds: { fixtures in
            let enumerator = FileManager.default.enumerator(at: fixtures, includingPropertiesForKeys: nil)
            var seeds: [Data] = []
            while let url = enumerator?.nextObject() as? URL, seeds.count < 16 {
                if url.pathExtension == "npy", let data = try? Data(contentsOf: url), data.count < 4096 {
                    seeds.append(data)
                }
            }
            return seeds
        })

    /// `[UInt32 LE n][first n bytes][rest]` → (first, rest); a short input is all first.
    static func split(_ data: Data) -> (Data, Data) {
        let bytes = [UInt8](data)
        guard bytes.count >= 4 else { return (data, Data()) }
        let count = Int(bytes[0]) | Int(bytes[1]) << 8 | Int(bytes[2]) << 16 | Int(bytes[3]) << 24
        let end = min(bytes.count, 4 + count)
        return (Data(bytes[4..<end]), Data(bytes[end...]))
    }

    static func join(_ first: Data, _ rest: Data) -> Data {
        let count = UInt32(first.count)
        return Data((0..<4).map { UInt8(truncatingIfNeeded: count >> (8 * $0)) }) + first + rest
    }
}
