import Foundation

extension MLModel {
    /// Compiles an `.mlpackage` or `.mlmodel` into a directory that
    /// ``load(contentsOf:configuration:)`` and ``init(contentsOf:)`` accept, and returns its URL.
    ///
    /// The directory (`<name>.mlmodelc`) is created in a new temporary folder; move it
    /// somewhere permanent to keep it, as on Apple platforms. Tessera's compiled form holds a
    /// checked copy of the model and a versioned marker file, so a directory moved elsewhere
    /// still loads, and one compiled by an incompatible Tessera version is rejected with a
    /// message to recompile.
    ///
    /// ```swift
    /// let temporary = try MLModel.compileModel(at: packageURL)
    /// let permanent = applicationSupport.appendingPathComponent(temporary.lastPathComponent)
    /// _ = try FileManager.default.replaceItemAt(permanent, withItemAt: temporary)
    /// let model = try MLModel(contentsOf: permanent)
    /// ```
    ///
    /// - Throws: ``MLModelError`` with code `.io` when the model is missing, truncated or
    ///   malformed, or the directory cannot be written.
    public class func compileModel(at modelURL: URL) throws -> URL {
        try CompiledModel.compile(modelURL)
    }

    /// Compiles a model without blocking the calling task; see `compileModel(at:)`.
    ///
    /// ```swift
    /// let compiled = try await MLModel.compileModel(at: packageURL)
    /// ```
    public class func compileModel(at url: URL) async throws -> URL {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global(qos: .userInitiated).async {
                continuation.resume(with: Result { try CompiledModel.compile(url) })
            }
        }
    }
}

/// Tessera's compiled model directory: `<name>.mlmodelc/` holding
/// `tessera-compiled-model.json` (format name and version) and the checked source, as
/// `model.mlpackage/` or as `model.mlmodel` with its `weights/` folder.
enum CompiledModel {
    /// The marker file's name.
    static let markerName = "tessera-compiled-model.json"
    /// The format name in the marker.
    static let format = "tessera-compiled-model"
    /// The compiled format's version; a change that older loaders cannot read bumps it.
    static let version = 1

    /// The marker's contents.
    struct Marker: Codable {
        var format: String
        var version: Int
        var source: String
        var entry: String
    }

    /// Compiles `source` into a new temporary directory.
    static func compile(_ source: URL) throws -> URL {
        let name = source.lastPathComponent
        do {
            _ = try CoreMLPackage(contentsOf: source)
        } catch let error as ModelFormatError {
            throw MLModelError(wrapping: error, model: name)
        }
        let fileManager = FileManager.default
        let folder = fileManager.temporaryDirectory.appendingPathComponent("tessera-compile-\(UUID().uuidString)")
        let output = folder.appendingPathComponent(source.deletingPathExtension().lastPathComponent + ".mlmodelc")
        do {
            try fileManager.createDirectory(at: output, withIntermediateDirectories: true)
            let entry: String
            var isDirectory: ObjCBool = false
            _ = fileManager.fileExists(atPath: source.path, isDirectory: &isDirectory)
            if isDirectory.boolValue {
                entry = "model.mlpackage"
                try fileManager.copyItem(at: source, to: output.appendingPathComponent(entry))
            } else {
                entry = "model.mlmodel"
                try fileManager.copyItem(at: source, to: output.appendingPathComponent(entry))
                let weights = source.deletingLastPathComponent().appendingPathComponent("weights")
                if fileManager.fileExists(atPath: weights.path) {
                    try fileManager.copyItem(at: weights, to: output.appendingPathComponent("weights"))
                }
            }
            let marker = Marker(format: format, version: version, source: name, entry: entry)
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            try encoder.encode(marker).write(to: output.appendingPathComponent(markerName))
        } catch {
            try? fileManager.removeItem(at: folder)
            throw MLModelError(.io, "cannot write the compiled model for \(name) at \(output.path): \(error)")
        }
        return output
    }

    /// The model file or package to parse for `url`: the entry of a Tessera-compiled
    /// directory, or `url` itself for an `.mlpackage` or `.mlmodel`.
    ///
    /// - Throws: ``MLModelError`` `.io` for a compiled directory of another format or version,
    ///   or an Apple-compiled `.mlmodelc`.
    static func resolve(_ url: URL) throws -> URL {
        let markerURL = url.appendingPathComponent(markerName)
        let name = url.lastPathComponent
        guard FileManager.default.fileExists(atPath: markerURL.path) else {
            if url.pathExtension == "mlmodelc" {
                throw MLModelError(
                    .io,
                    "cannot load \(name): it is not a Tessera-compiled model (no \(markerName)); Apple's compiled "
                        + ".mlmodelc format is not readable on Linux: compile the .mlpackage or .mlmodel with "
                        + "MLModel.compileModel(at:) instead")
            }
            return url
        }
        let marker: Marker
        do {
            marker = try JSONDecoder().decode(Marker.self, from: Data(contentsOf: markerURL))
        } catch {
            throw MLModelError(.io, "cannot load \(name): \(markerName) is unreadable (\(error)); recompile the model")
        }
        guard marker.format == format, marker.version == version else {
            throw MLModelError(
                .io,
                "cannot load \(name): it was compiled as \(marker.format) version \(marker.version), and this "
                    + "Tessera reads \(format) version \(version); recompile the model with MLModel.compileModel(at:)")
        }
        guard !marker.entry.contains("/"), !marker.entry.hasPrefix(".") else {
            throw MLModelError(.io, "cannot load \(name): \(markerName) names an invalid entry \"\(marker.entry)\"")
        }
        return url.appendingPathComponent(marker.entry)
    }
}
