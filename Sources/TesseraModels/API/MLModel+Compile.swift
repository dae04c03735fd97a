import Foundation

extension MLModel {
    /// Compiles an `.mlpackage` or `.mlmodel` into a directory that
    /// ``load(contentsOf:configuration:)`` and ``init(contentsOf:)`` accept, and returns its URL.
    ///
    /// The directory (`<name>.mlmodelc`) is created in a new temporary folder; move it
    /// somewhere permanent to keep it, as on Apple platforms. It holds one file,
    /// `model.tessera`: a versioned, checksummed header, the parsed-ready specification and
    /// the weights, Float16 constants widened to Float32 and every blob 64-byte aligned, so
    /// loading maps the file instead of converting weights. Nothing in it names the
    /// directory, so a moved directory still loads; one compiled by an incompatible Tessera
    /// version, or truncated or corrupted, is refused with a message to recompile.
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
        try CompiledModelWriter.compile(modelURL, progress: ProgressReporter(handler: nil))
    }

    /// **Tessera extension**: compiles a model as `compileModel(at:)` does, reporting
    /// progress (reading, packing weights, writing) to `progress`.
    ///
    /// ```swift
    /// let compiled = try MLModel.compileModel(at: packageURL) { print($0) }
    /// ```
    public class func compileModel(at modelURL: URL, progress: @escaping MLModelProgressHandler) throws -> URL {
        try CompiledModelWriter.compile(modelURL, progress: ProgressReporter(handler: progress))
    }

    /// Compiles a model without blocking the calling task; see `compileModel(at:)`.
    ///
    /// ```swift
    /// let compiled = try await MLModel.compileModel(at: packageURL)
    /// ```
    public class func compileModel(at url: URL) async throws -> URL {
        try await runOffPool { try compileModel(at: url) as URL }
    }
}
