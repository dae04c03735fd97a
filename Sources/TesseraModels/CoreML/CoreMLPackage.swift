import Foundation

/// A Core ML model on disk, parsed: an `.mlpackage` directory or a single `.mlmodel` file.
///
/// Loading resolves the package's manifest, decodes the specification and, for ML
/// programs, checks that every weight reference points at a valid blob of the right type
/// and size. Weight files are mapped once and shared.
///
/// ```swift
/// let package = try CoreMLPackage(contentsOf: URL(fileURLWithPath: "Classifier.mlpackage"))
/// let program = try package.model.requireMLProgram(file: package.modelDisplayName)
/// ```
package struct CoreMLPackage: Sendable {
    /// What the user pointed at.
    package let url: URL
    /// The specification file (`Data/com.apple.CoreML/model.mlmodel`, or `url` itself).
    package let modelURL: URL
    /// The directory `@model_path/weights/…` references resolve against.
    package let weightsDirectory: URL
    /// The decoded specification.
    package let model: CoreMLSpec.Model
    /// The weight files the program references, by their `BlobFileValue.fileName`.
    package let weightFiles: [String: WeightFile]
    /// The weight files by base name (`weight.bin`) when the package was made from bytes in
    /// memory (``init(modelData:weightFiles:url:)``): weight references (also a pipeline
    /// stage's) resolve here and no file is read. `nil` for a package on disk.
    package let inMemoryWeights: [String: Data]?

    /// The name errors use for the specification file (`modelURL`'s last component, taken once:
    /// every constant of a program names it, and `URL` parses the path each time it is asked).
    package let modelDisplayName: String
    /// A compiled model's content checksum still running
    /// (``CompiledModelReader/decode(_:directory:progress:inMemory:verifyingContents:deferringVerification:)``
    /// with deferral); whoever loads the model must call its `finish()` before using it.
    /// `nil` for packages and verified compiled models.
    var contentVerification: CompiledModelVerification?

    /// Loads a model from an `.mlpackage` directory or an `.mlmodel` file.
    ///
    /// - Throws: ``ModelFormatError`` when a file is missing or malformed, or a weight
    ///   reference is invalid. A model that is not an ML program loads (its ``model`` says
    ///   what it is); ``CoreMLSpec/Model/requireMLProgram(file:)`` rejects it.
    package init(contentsOf url: URL) throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
            throw ModelFormatError(.fileNotFound, file: url.lastPathComponent, "no model at \(url.path)")
        }
        self.url = url
        if isDirectory.boolValue {
            let manifestURL = url.appendingPathComponent("Manifest.json")
            guard FileManager.default.fileExists(atPath: manifestURL.path) else {
                let hint =
                    url.pathExtension == "mlmodelc"
                    ? "compiled .mlmodelc directories are not supported yet; load the .mlpackage or .mlmodel"
                    : "the directory has no Manifest.json, so it is not an .mlpackage"
                throw ModelFormatError(.fileNotFound, file: url.lastPathComponent, hint)
            }
            let manifest = try ModelPackageManifest(json: try Self.read(manifestURL, name: "Manifest.json"))
            let dataDirectory = url.appendingPathComponent("Data")
            modelURL = dataDirectory.appendingPathComponent(manifest.rootModel.path)
            weightsDirectory =
                manifest.weights.map { dataDirectory.appendingPathComponent($0.path) }
                ?? modelURL.deletingLastPathComponent().appendingPathComponent("weights")
        } else {
            modelURL = url
            weightsDirectory = url.deletingLastPathComponent().appendingPathComponent("weights")
        }
        let name = modelURL.lastPathComponent
        modelDisplayName = name
        model = try CoreMLSpec.Model(decoding: try Self.read(modelURL, name: name), file: name)
        inMemoryWeights = nil
        weightFiles = try Self.loadWeights(of: model, weightsDirectory: weightsDirectory, modelURL: modelURL)
    }

    /// A package made from bytes in memory, without the file system: the specification
    /// (`model.mlmodel`) and the weight files by base name (`["weight.bin": …]`). It decodes and
    /// checks exactly as ``init(contentsOf:)`` does after reading the files; `url` only names
    /// the package in errors (`Data/com.apple.CoreML/model.mlmodel` and `weights/` under it).
    ///
    /// - Throws: ``ModelFormatError`` when the specification is malformed, a weight reference
    ///   names a file not in `weightFiles`, or a reference is invalid.
    package init(modelData: Data, weightFiles: [String: Data], url: URL) throws {
        self.url = url
        modelURL = url.appendingPathComponent("Data/com.apple.CoreML/model.mlmodel")
        weightsDirectory = modelURL.deletingLastPathComponent().appendingPathComponent("weights")
        modelDisplayName = modelURL.lastPathComponent
        model = try CoreMLSpec.Model(decoding: modelData, file: modelDisplayName)
        inMemoryWeights = weightFiles
        self.weightFiles = try Self.loadWeights(
            of: model, weightsDirectory: weightsDirectory, modelURL: modelURL, inMemory: weightFiles)
    }

    /// The blob a constant refers to, checked against its type, and its file.
    package borrowing func blob(for reference: MILBlobReference, type: MILTensorType) throws -> (WeightFile, WeightBlob)
    {
        guard let file = weightFiles[reference.fileName] else {
            throw ModelFormatError(
                .fileNotFound, file: modelDisplayName, "no weight file was loaded for \"\(reference.fileName)\"")
        }
        return (file, try file.blob(atMetadataOffset: reference.offset, for: type))
    }

    /// Reads a whole file (mapped when the system allows).
    static func read(_ url: URL, name: String) throws -> Data {
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw ModelFormatError(.fileNotFound, file: name, "the file does not exist at \(url.path)")
        }
        do {
            return try Data(readingFile: url, options: .mappedIfSafe)
        } catch {
            throw ModelFormatError(.unreadableFile, file: name, "cannot read the file: \(error.localizedDescription)")
        }
    }

    /// The local file a `BlobFileValue.fileName` names.
    ///
    /// coremltools writes `@model_path/weights/<file>`, where `@model_path` is the directory
    /// holding the specification; like coremltools' own loader this takes the file's base
    /// name and looks it up in the weights directory.
    static func weightURL(for fileName: String, weightsDirectory: URL, file: String) throws -> URL {
        let prefix = "@model_path/"
        guard fileName.hasPrefix(prefix) else {
            throw ModelFormatError(
                .invalidSpecification, file: file,
                "weight reference \"\(fileName)\" does not start with \(prefix)")
        }
        let relative = fileName.dropFirst(prefix.count)
        let components = relative.split(separator: "/")
        guard let base = components.last, !components.contains(".."), base != "." else {
            throw ModelFormatError(
                .invalidSpecification, file: file, "weight reference \"\(fileName)\" leaves the package")
        }
        return weightsDirectory.appendingPathComponent(String(base))
    }

    /// Maps every weight file the program references and checks every blob reference; with
    /// `inMemory`, the files come from it by base name instead of from `weightsDirectory`.
    static func loadWeights(
        of model: CoreMLSpec.Model, weightsDirectory: URL, modelURL: URL, inMemory: [String: Data]? = nil
    ) throws -> [String: WeightFile] {
        guard let program = model.mlProgram else { return [:] }
        let file = modelURL.lastPathComponent
        var files: [String: WeightFile] = [:]
        var checked = Set<MILBlobReference>()
        try program.forEachBlobReference { reference, type in
            if files[reference.fileName] == nil {
                let url = try weightURL(for: reference.fileName, weightsDirectory: weightsDirectory, file: file)
                if let inMemory {
                    let name = url.pathComponents.suffix(2).joined(separator: "/")
                    guard let data = inMemory[url.lastPathComponent] else {
                        throw ModelFormatError(.fileNotFound, file: name, "the package has no weight file \(name)")
                    }
                    files[reference.fileName] = try WeightFile(data: data, url: url, displayName: name)
                } else {
                    files[reference.fileName] = try WeightFile(contentsOf: url)
                }
            }
            guard let tensorType = type?.tensorType else {
                throw ModelFormatError(
                    .invalidSpecification, file: file,
                    "the constant at blob offset \(reference.offset) has no tensor type")
            }
            if checked.insert(reference).inserted {
                _ = try files[reference.fileName]!.blob(atMetadataOffset: reference.offset, for: tensorType)
            }
        }
        return files
    }
}
