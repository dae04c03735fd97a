/// The error the throwing ``MLMultiArray`` initializers throw for bad input. **Tessera
/// extension**: Core ML reports these as an `NSError`; here they are a typed error with a
/// message that names the call, what was wrong and the values involved.
///
/// ```swift
/// do {
///     _ = try MLMultiArray(shape: [2, -1], dataType: .float32)
/// } catch let error as MLMultiArrayError {
///     print(error.code, error)   // negativeDimension, "[MLMultiArray.init(shape:dataType:)] ..."
/// }
/// ```
public struct MLMultiArrayError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of input was rejected.
    public enum Code: Sendable, Equatable {
        /// A dimension is negative, not an integer, or the shape has too many elements.
        case invalidShape
        /// The strides do not fit the shape: wrong count, negative, or overlapping elements.
        case invalidStrides
        /// A value does not fit the data type (an integer beyond `Int32` for `.int32`).
        case valueOutOfRange
        /// A data pointer is not aligned for its data type.
        case misalignedPointer
        /// The array's data type is not the one asked for.
        case dataTypeMismatch
    }

    /// What kind of input was rejected.
    public let code: Code
    /// A sentence naming the call, what was wrong and the values involved.
    public let message: String

    /// Creates an error with a code and a message.
    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The message.
    public var description: String { message }
}
