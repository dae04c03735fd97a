import Foundation
import TesseraKernels

/// Opens a model for loading: a Tessera-compiled `.mlmodelc` directory (checked, mapped and
/// relinked to its weights section), or an `.mlpackage` / `.mlmodel`, parsed as is.
package enum ModelSource {
    /// The marker file of format version 1 (a copy of the package and a JSON marker).
    static let legacyMarkerName = "tessera-compiled-model.json"

    /// The parsed package for `url` (tests and tools; no progress reports).
    ///
    /// - Throws: ``MLModelError``, as ``open(_:progress:)`` does.
    package static func open(_ url: URL) throws -> CoreMLPackage {
        try open(url, progress: ProgressReporter(handler: nil))
    }

    /// The parsed package for `url`.
    ///
    /// - Parameter deferringVerification: Whether a compiled model's content checksum may
    ///   still be running when this returns (then the caller must call the package's
    ///   ``CoreMLPackage/contentVerification`` `finish()` before using the model; see
    ///   ``CompiledModelReader/decode(_:directory:progress:inMemory:verifyingContents:deferringVerification:)``).
    /// - Throws: ``MLModelError`` `.io` for a missing, truncated, corrupted or stale model,
    ///   an Apple-compiled `.mlmodelc`, or a malformed package; `.generic` for an
    ///   unsupported model type.
    static func open(
        _ url: URL, progress: ProgressReporter, deferringVerification: Bool = false
    ) throws -> CoreMLPackage {
        let name = url.lastPathComponent
        let compiledFile = url.appendingPathComponent(CompiledModelHeader.fileName)
        let fileManager = FileManager.default
        if fileManager.fileExists(atPath: compiledFile.path) {
            return try CompiledModelReader.open(
                directory: url, progress: progress, deferringVerification: deferringVerification)
        }
        if fileManager.fileExists(atPath: url.appendingPathComponent(legacyMarkerName).path) {
            let marker =
                try? JSONSerialization.jsonObject(
                    with: Data(readingFile: url.appendingPathComponent(legacyMarkerName))) as? [String: Any]
            let version = (marker?["version"] as? Int).map(String.init) ?? "unknown"
            throw MLModelError(
                .io,
                "cannot load \(name): it was compiled as tessera-compiled-model version \(version), and this Tessera "
                    + "reads compiled format version \(CompiledModelHeader.formatVersion); recompile the model with "
                    + "MLModel.compileModel(at:)")
        }
        if url.pathExtension == "mlmodelc" {
            throw MLModelError(
                .io,
                "cannot load \(name): it is not a Tessera-compiled model (no \(CompiledModelHeader.fileName)); Apple's "
                    + "compiled .mlmodelc format is not readable on Linux: compile the .mlpackage or .mlmodel with "
                    + "MLModel.compileModel(at:) instead")
        }
        progress.report(.reading)
        do {
            let package = try CoreMLPackage(contentsOf: url)
            progress.report(.parsing)
            return package
        } catch let error as ModelFormatError {
            throw MLModelError(wrapping: error, model: name)
        }
    }
}

/// Reads `model.tessera`; see ``CompiledModelHeader`` for the layout.
enum CompiledModelReader {
    /// Maps, verifies and decodes a compiled directory.
    ///
    /// - Parameter deferringVerification: As ``decode(_:directory:progress:inMemory:verifyingContents:deferringVerification:)``.
    static func open(
        directory: URL, progress: ProgressReporter, deferringVerification: Bool = false
    ) throws -> CoreMLPackage {
        let fileURL = directory.appendingPathComponent(CompiledModelHeader.fileName)
        progress.report(.reading)
        let file = try MappedFile(fileURL, name: directory.lastPathComponent)
        return try decode(file, directory: directory, progress: progress, deferringVerification: deferringVerification)
    }

    /// Verifies and decodes a compiled model given as the bytes of its `model.tessera`, without
    /// the file system; `directory` only names it in errors.
    ///
    /// - Throws: ``MLModelError``, as ``open(directory:progress:)`` does.
    static func open(bytes: Data, directory: URL) throws -> CoreMLPackage {
        try decode(
            MappedFile(copying: bytes), directory: directory, progress: ProgressReporter(handler: nil), inMemory: true)
    }

    /// Content bytes per specification byte from which a deferred checksum starts before the
    /// program is decoded rather than after: the checksum runs at about 20 GB/s over two cores
    /// and decoding and lowering a program take about 25 ns per byte of it, so they take about
    /// as long at 500 (MobileNetV2 has 180, a transformer layer 405, the Whisper-sized encoder
    /// 970, ResNet-50 1,400, BERT-base 3,700).
    static let checksumFirstRatio = 512

    /// Verifies and decodes the bytes of `directory`'s `model.tessera`.
    ///
    /// The content checksum runs on other threads (``CompiledModelVerification``) while the
    /// specification is decoded and relinked, or, deferred for a model with little weight per
    /// byte of program (``checksumFirstRatio``), from when it is decoded; the stored prepared
    /// weights are registered only after it passes.
    ///
    /// - Parameters:
    ///   - verifyingContents: Whether to check the content checksum; `false` only for
    ///     bytes this process has just made (`compileModel` loading its own image to collect the
    ///     prepared forms, before the checksum exists). The header is always checked.
    ///   - deferringVerification: Whether to return before the checksum finished: the package's
    ///     ``CoreMLPackage/contentVerification`` then holds it, and the caller must call its
    ///     `finish()` before using the model (``MLModel`` does, after lowering, so the checksum
    ///     also overlaps the lowering). Otherwise the checksum has passed when this returns.
    static func decode(
        _ file: MappedFile, directory: URL, progress: ProgressReporter, inMemory: Bool = false,
        verifyingContents: Bool = true, deferringVerification: Bool = false
    ) throws -> CoreMLPackage {
        let name = directory.lastPathComponent
        let header: CompiledModelHeader
        do {
            header = try CompiledModelHeader(reading: file.bytes)
        } catch {
            throw MLModelError(.io, "cannot load \(name): \(message(for: error))")
        }
        let contentSize = header.totalSize - CompiledModelHeader.size
        progress.report(.verifying, 0, of: contentSize)
        // Stored prepared forms for this CPU: the kernels find them instead of packing, once
        // the checksum has passed.
        let registerForms: @Sendable () -> Void = {
            if let forms = CompiledPreparedWeights.decode(header.prepared, of: file.bytes, weights: header.weights),
                !forms.isEmpty, let base = file.bytes.baseAddress
            {
                PreparedWeights.register(forms, base: base, keepAlive: file)
            }
        }
        let startVerification = {
            verifyingContents
                ? CompiledModelVerification(
                    file, expected: header.contentChecksum, contentSize: contentSize, name: name, progress: progress,
                    afterPassing: registerForms) : nil
        }
        // A deferred checksum of a small model starts once its program is decoded: decoding
        // spreads the operations over the cores (with the checksum running, the workers got a
        // twentieth of them), and the checksum still ends during the lowering. A model with
        // hundreds of weight bytes per byte of program (ResNet-50, BERT) starts it first, as its
        // checksum outlasts the decoding and lowering together.
        let checksumFirst =
            !deferringVerification
            || contentSize >= CompiledModelReader.checksumFirstRatio * header.specification.range.count
        var verification = checksumFirst ? startVerification() : nil
        progress.report(.parsing)
        var package: CoreMLPackage
        do {
            package = try decodeContents(file, header: header, directory: directory, inMemory: inMemory)
        } catch {
            throw (verification ?? startVerification())?.intactOrThrow(error) ?? error
        }
        if !checksumFirst { verification = startVerification() }
        if let verification {
            if deferringVerification {
                package.contentVerification = verification
            } else {
                try verification.finish()
            }
        } else {
            registerForms()
        }
        return package
    }

    /// Decodes the specification, relinks every blob reference to the weights section and
    /// checks every blob: the package of a compiled file whose header has been read.
    private static func decodeContents(
        _ file: MappedFile, header: CompiledModelHeader, directory: URL, inMemory: Bool
    ) throws -> CoreMLPackage {
        let name = directory.lastPathComponent
        let fileURL = directory.appendingPathComponent(CompiledModelHeader.fileName)
        do {
            var model = try CoreMLSpec.Model(
                decoding: Data(UnsafeRawBufferPointer(rebasing: file.bytes[header.specification.range])),
                file: CompiledModelHeader.fileName)
            let table = try CompiledBlobTable(
                decoding: UnsafeRawBufferPointer(rebasing: file.bytes[header.references.range]))
            var weightFiles: [String: WeightFile] = [:]
            if var program = model.mlProgram {
                model.mlProgram = nil  // the program's only owner is `program` while it is relinked in place
                var entries: [MILBlobReference: CompiledBlobTable.Entry] = [:]
                entries.reserveCapacity(table.entries.count)
                for entry in table.entries { entries[entry.source] = entry }
                var weights: WeightFile?
                if header.weights.size > 0 {
                    weights = try WeightFile(
                        data: file.data(in: header.weights.range), url: fileURL,
                        displayName: "\(CompiledModelHeader.fileName) weights")
                    weightFiles[CompiledBlobTable.compiledFileName] = weights
                }
                var relinking = BlobRelinking(table: entries, weights: weights)
                guard try program.relinkBlobs(&relinking) else {
                    throw MLModelError(
                        .io,
                        "cannot load \(name): a weight of the program is missing from the compiled weights; recompile")
                }
                model.mlProgram = program
            }
            return CoreMLPackage(
                compiledAt: directory, modelURL: fileURL, model: model, weightFiles: weightFiles, inMemory: inMemory)
        } catch let error as ModelFormatError {
            throw MLModelError(wrapping: error, model: name)
        } catch let problem as CompiledModelHeader.Problem {
            throw MLModelError(.io, "cannot load \(name): \(message(for: problem))")
        }
    }

    /// A header problem in words.
    static func message(for problem: CompiledModelHeader.Problem) -> String {
        let file = CompiledModelHeader.fileName
        let recompile = "recompile the model with MLModel.compileModel(at:)"
        switch problem {
        case .tooShort(let count):
            return "\(file) is \(count) bytes, shorter than its header; the compiled model is truncated: \(recompile)"
        case .badMagic:
            return "\(file) is not a Tessera compiled model file (bad magic); \(recompile)"
        case .otherVersion(let version, let writer):
            return "it was compiled as format version \(version) (by Tessera \(writer.isEmpty ? "?" : writer)), and "
                + "this Tessera reads format version \(CompiledModelHeader.formatVersion); \(recompile)"
        case .badHeaderChecksum:
            return "\(file)'s header fails its checksum; the compiled model is corrupted: \(recompile)"
        case .sizeMismatch(let declared, let actual):
            return "\(file) is \(actual) bytes but its header says \(declared); the compiled model is "
                + (actual < declared ? "truncated" : "corrupted") + ": \(recompile)"
        case .sectionOutOfBounds(let section):
            return "\(file)'s \(section) section lies outside the file; the compiled model is corrupted: \(recompile)"
        }
    }
}
