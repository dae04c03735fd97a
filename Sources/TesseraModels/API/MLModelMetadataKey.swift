/// The keys of ``MLModelDescription/metadata``.
///
/// ```swift
/// let author = model.modelDescription.metadata[.author] as? String
/// let extra = model.modelDescription.metadata[.creatorDefinedKey] as? [String: String]
/// ```
public struct MLModelMetadataKey: RawRepresentable, Hashable, Sendable {
    /// The key's string.
    public let rawValue: String

    /// Creates a key from its string.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The model's author (`String`).
    public static let author = MLModelMetadataKey(rawValue: "MLModelAuthorKey")
    /// A description of the model (`String`).
    public static let description = MLModelMetadataKey(rawValue: "MLModelDescriptionKey")
    /// The model's license (`String`).
    public static let license = MLModelMetadataKey(rawValue: "MLModelLicenseKey")
    /// The model's version (`String`).
    public static let versionString = MLModelMetadataKey(rawValue: "MLModelVersionStringKey")
    /// Entries the creator added (`[String: String]`); coremltools adds its version here.
    public static let creatorDefinedKey = MLModelMetadataKey(rawValue: "MLModelCreatorDefinedKey")
}
