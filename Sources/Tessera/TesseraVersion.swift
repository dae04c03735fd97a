/// The version of the Tessera package.
public enum TesseraVersion {
    /// The version string, `major.minor.patch`.
    public static let string = "0.1.0"
}
