/// A set of named feature values: a model's input or output.
///
/// Conform your own types (structs or classes) to hand a model inputs without building a
/// dictionary, or use ``MLDictionaryFeatureProvider``. A model asks only for the names its
/// description lists, so a provider may carry extra features.
///
/// ```swift
/// struct DigitInput: MLFeatureProvider {
///     var pixels: MLMultiArray
///     var featureNames: Set<String> { ["image"] }
///     func featureValue(for featureName: String) -> MLFeatureValue? {
///         featureName == "image" ? MLFeatureValue(multiArray: pixels) : nil
///     }
/// }
/// ```
public protocol MLFeatureProvider {
    /// The names of the features the provider holds.
    var featureNames: Set<String> { get }

    /// The value of a feature, or `nil` when the provider has no feature of that name.
    func featureValue(for featureName: String) -> MLFeatureValue?
}
