import Foundation

/// The error domain of Core ML errors (`MLModelError.errorDomain`).
// swift-format-ignore: AlwaysUseLowerCamelCase
// Core ML's name for the constant.
public let MLModelErrorDomain: String = "com.apple.CoreML"

/// An error a model throws while loading, compiling or predicting: Core ML's error type,
/// with Core ML's codes, and a message that says what was wrong and where.
///
/// ```swift
/// do {
///     _ = try model.prediction(from: input)
/// } catch let error as MLModelError where error.code == .featureType {
///     print(error.localizedDescription)   // input "image" has shape [1, 63], but the model expects [1, 64]
/// }
/// ```
///
/// Catch by code with the static shorthands, as on Apple platforms:
/// `catch MLModelError.featureType { … }`.
///
/// Errors from lower layers (such as a corrupted package's format error) are wrapped: the
/// message repeats theirs and ``underlyingError`` keeps the original.
public struct MLModelError: Error, Sendable, CustomStringConvertible, CustomNSError {
    /// Core ML's error codes; raw values are Apple's.
    public enum Code: Int, Sendable, Hashable {
        /// A problem that fits no other code (e.g. an unsupported model type).
        case generic = 0
        /// A feature value of the wrong type, shape or name (missing inputs included).
        case featureType = 1
        /// A model file that cannot be read, compiled or loaded.
        case io = 3
        /// A custom layer failed.
        case customLayer = 4
        /// A custom model failed.
        case customModel = 5
        /// On-device update failed.
        case update = 6
        /// A model parameter problem.
        case parameters = 7
        /// Fetching a model decryption key failed.
        case modelDecryptionKeyFetch = 8
        /// Decrypting a model failed.
        case modelDecryption = 9
        /// A model collection problem.
        case modelCollection = 10
        /// The prediction was cancelled.
        case predictionCancelled = 11
    }

    /// The error's code.
    public let code: Code
    /// What was wrong and where. **Tessera extension.**
    public let message: String
    /// The lower-layer error this one wraps, if any. **Tessera extension.**
    public let underlyingError: (any Error & Sendable)?

    /// Creates an error with a message that says what was wrong and where.
    ///
    /// ```swift
    /// throw MLModelError(.featureType, "input \"image\" is missing")
    /// ```
    public init(_ code: Code, _ message: String, underlyingError: (any Error & Sendable)? = nil) {
        self.code = code
        self.message = message
        self.underlyingError = underlyingError
    }

    /// The error domain, `"com.apple.CoreML"`.
    public static var errorDomain: String { MLModelErrorDomain }

    /// The code's raw value.
    public var errorCode: Int { code.rawValue }

    /// The message under `NSLocalizedDescriptionKey`, so `localizedDescription` returns it.
    public var errorUserInfo: [String: Any] { [NSLocalizedDescriptionKey: message] }

    /// The message.
    public var description: String { message }

    /// `.generic`, for `catch MLModelError.generic`.
    public static var generic: Code { .generic }
    /// `.featureType`, for `catch MLModelError.featureType`.
    public static var featureType: Code { .featureType }
    /// `.io`, for `catch MLModelError.io`.
    public static var io: Code { .io }
    /// `.customLayer`.
    public static var customLayer: Code { .customLayer }
    /// `.customModel`.
    public static var customModel: Code { .customModel }
    /// `.update`.
    public static var update: Code { .update }
    /// `.parameters`.
    public static var parameters: Code { .parameters }
    /// `.modelDecryptionKeyFetch`.
    public static var modelDecryptionKeyFetch: Code { .modelDecryptionKeyFetch }
    /// `.modelDecryption`.
    public static var modelDecryption: Code { .modelDecryption }
    /// `.modelCollection`.
    public static var modelCollection: Code { .modelCollection }
    /// `.predictionCancelled`.
    public static var predictionCancelled: Code { .predictionCancelled }
}

extension MLModelError.Code {
    /// Whether `error` is an ``MLModelError`` with this code; makes
    /// `catch MLModelError.featureType` work.
    ///
    /// ```swift
    /// do { _ = try model.prediction(from: input) } catch MLModelError.featureType { … }
    /// ```
    public static func ~= (code: MLModelError.Code, error: any Error) -> Bool {
        (error as? MLModelError)?.code == code
    }
}

extension MLModelError {
    /// Wraps a format-layer error: file problems become `.io`, unsupported model types `.generic`.
    init(wrapping error: ModelFormatError, model: String) {
        let code: Code = error.kind == .unsupportedModelType ? .generic : .io
        self.init(code, "cannot load \(model): \(error.description)", underlyingError: error)
    }
}
