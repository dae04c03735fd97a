import Foundation

extension MLModel {
    /// Loads a model on a background queue and calls `handler` with the result there.
    ///
    /// ```swift
    /// MLModel.load(contentsOf: compiledURL) { result in
    ///     switch result {
    ///     case .success(let model): print(model.modelDescription.inputOrder)
    ///     case .failure(let error): print(error.localizedDescription)
    ///     }
    /// }
    /// ```
    public class func load(
        contentsOf url: URL, configuration: MLModelConfiguration = MLModelConfiguration(),
        completionHandler handler: @escaping @Sendable (Result<MLModel, any Error>) -> Void
    ) {
        let snapshot = configuration.snapshot
        DispatchQueue.global(qos: .userInitiated).async {
            handler(Result { try MLModel(contentsOf: url, configuration: MLModelConfiguration(snapshot)) })
        }
    }

    /// Compiles a model on a background queue and calls `handler` with the compiled
    /// directory's URL there; see `compileModel(at:)`.
    ///
    /// ```swift
    /// MLModel.compileModel(at: packageURL) { result in
    ///     if case .success(let compiledURL) = result { print(compiledURL.path) }
    /// }
    /// ```
    public class func compileModel(
        at url: URL, completionHandler handler: @escaping @Sendable (Result<URL, any Error>) -> Void
    ) {
        DispatchQueue.global(qos: .userInitiated).async {
            handler(Result { try CompiledModel.compile(url) })
        }
    }
}
