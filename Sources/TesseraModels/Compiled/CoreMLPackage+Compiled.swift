import Foundation

extension CoreMLPackage {
    /// A package assembled from a compiled model's parts (no files are read).
    ///
    /// - Parameters:
    ///   - url: The compiled directory.
    ///   - modelURL: The compiled file, which errors name.
    ///   - model: The decoded specification, its blob references pointing into `weightFiles`.
    ///   - weightFiles: The weight images by the file name the program uses.
    ///   - inMemory: Whether the compiled file was given as bytes (then a pipeline stage's
    ///     weight reference finds no file instead of looking in `url`).
    init(
        compiledAt url: URL, modelURL: URL, model: CoreMLSpec.Model, weightFiles: [String: WeightFile],
        inMemory: Bool = false
    ) {
        self.url = url
        self.modelURL = modelURL
        self.modelDisplayName = modelURL.lastPathComponent
        self.weightsDirectory = url
        self.model = model
        self.weightFiles = weightFiles
        self.inMemoryWeights = inMemory ? [:] : nil
    }
}
