/// A prediction that cannot run on a lowered function: an input is missing or does not fit
/// the function's declared type, or an operation meets shapes it cannot take.
///
/// Problems in the model file itself are found at load and thrown as ``ModelFormatError``;
/// this error is about the values one prediction was given. The description names the model
/// file and, where it applies, the input or the operation:
///
/// ```
/// model.mlmodel: input "x" has rank 3 ([1, 8, 2]) but the function declares fp32[1, 8]
/// ```
package struct LoweringError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The kinds of problem a prediction can hit.
    package enum Kind: Sendable, Equatable {
        /// A declared input was not given.
        case missingInput
        /// An input has the wrong rank, a wrong fixed dimension, or a scalar type that cannot
        /// be converted to the declared one.
        case invalidInput
        /// An operation's operands do not fit it (possible when a flexible input shape leads
        /// to shapes the model was not written for).
        case shapeMismatch
    }

    /// What was wrong.
    package var kind: Kind
    /// The specification file of the model (`model.mlmodel`).
    package var file: String
    /// A sentence saying what and where.
    package var message: String

    /// Creates an error.
    package init(_ kind: Kind, file: String, _ message: String) {
        self.kind = kind
        self.file = file
        self.message = message
    }

    /// `file: message`.
    package var description: String { file.isEmpty ? message : "\(file): \(message)" }
}

/// A MIL rule that the tensor operations do not check (a parameter list of the wrong length
/// for the input's rank, an empty axis to reduce, …), found while building one operation's
/// nodes; ``LoweredFunction/run(_:)`` turns it into a ``LoweringError`` that names the
/// operation and the model, as it does the tensor rules' `MLTensorShapeError`.
struct OperandError: Error {
    /// What did not fit.
    var message: String

    init(_ message: String) { self.message = message }
}

/// Throws an ``OperandError`` with `message` unless `condition` holds.
@inline(__always)
func require(_ condition: Bool, _ message: @autoclosure () -> String) throws {
    if !condition { throw OperandError(message()) }
}
