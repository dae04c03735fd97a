import Foundation

extension MLModel {
    /// Loads an `.mlpackage` given as bytes in memory, without the file system: its
    /// specification (`model.mlmodel`) and its weight files by base name (`["weight.bin": …]`).
    /// Everything after reading the files is what ``init(contentsOf:configuration:)`` does
    /// (decoding, weight references, lowering, the load-time build); `name` names the model in
    /// errors. The fuzz targets load this way (`Fuzz/TesseraFuzz`).
    ///
    /// ```swift
    /// let model = try MLModel(modelData: spec, weightFiles: ["weight.bin": weights], name: "M.mlpackage")
    /// ```
    ///
    /// - Throws: ``MLModelError``, as ``init(contentsOf:configuration:)`` does for a package.
    package convenience init(
        modelData: Data, weightFiles: [String: Data], name: String,
        configuration: MLModelConfiguration = MLModelConfiguration()
    ) throws {
        let package: CoreMLPackage
        do {
            package = try CoreMLPackage(
                modelData: modelData, weightFiles: weightFiles,
                url: MLModel.inMemoryDirectory.appendingPathComponent(name))
        } catch let error as ModelFormatError {
            throw MLModelError(wrapping: error, model: name)
        }
        try self.init(
            package: package, snapshot: configuration.snapshot, name: name, reporter: ProgressReporter(handler: nil))
    }

    /// Loads a Tessera-compiled model given as the bytes of its `model.tessera`, without the
    /// file system: checked (size, checksums, format version) and decoded as
    /// ``init(contentsOf:configuration:)`` does for a compiled directory; `name` names the model
    /// in errors.
    ///
    /// - Throws: ``MLModelError``, as ``init(contentsOf:configuration:)`` does for a compiled
    ///   model (`.io` when it is truncated, corrupted or of another format version).
    package convenience init(
        compiledData: Data, name: String, configuration: MLModelConfiguration = MLModelConfiguration()
    ) throws {
        let package = try CompiledModelReader.open(
            bytes: compiledData, directory: MLModel.inMemoryDirectory.appendingPathComponent(name))
        try self.init(
            package: package, snapshot: configuration.snapshot, name: name, reporter: ProgressReporter(handler: nil))
    }

    /// The directory in-memory models are named under (never read).
    static let inMemoryDirectory = URL(fileURLWithPath: "/in-memory")
}
