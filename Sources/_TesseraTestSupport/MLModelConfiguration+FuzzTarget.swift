import TesseraModels

extension MLModelConfiguration {
    /// The configuration the `package` fuzz target loads with, and the tests replaying its
    /// findings: a 4 MiB `memoryLimit`, far above what the seed models need on their small
    /// inputs (`MLModelDescription.smallInputs`), so a mutated model whose prediction would hold
    /// hundreds of megabytes meets the memory cap instead of computing them.
    ///
    /// ```swift
    /// let model = try MLModel(contentsOf: url, configuration: .fuzzTarget)
    /// ```
    package static var fuzzTarget: MLModelConfiguration {
        let configuration = MLModelConfiguration()
        configuration.memoryLimit = 4 << 20
        return configuration
    }
}
