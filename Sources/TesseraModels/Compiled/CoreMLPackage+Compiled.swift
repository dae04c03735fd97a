import Foundation

extension CoreMLPackage {
    /// A package assembled from a compiled model's parts (no files are read).
    ///
    /// - Parameters:
    ///   - url: The compiled directory.
    ///   - modelURL: The compiled file, which errors name.
    ///   - model: The decoded specification, its blob references pointing into `weightFiles`.
    ///   - weightFiles: The weight images by the file name the program uses.
    init(compiledAt url: URL, modelURL: URL, model: CoreMLSpec.Model, weightFiles: [String: WeightFile]) {
        self.url = url
        self.modelURL = modelURL
        self.weightsDirectory = url
        self.model = model
        self.weightFiles = weightFiles
    }
}
