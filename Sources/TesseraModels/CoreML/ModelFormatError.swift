/// A model file that cannot be loaded: what was wrong, in which file, and where in it.
///
/// Every problem found while reading a package, a specification or a weight file throws
/// this error; nothing in the format layer traps on bad input. The description reads as one
/// sentence a user can act on:
///
/// ```
/// weight.bin: blob at offset 640 runs past the end of the file (768 bytes); the package is truncated or corrupted
/// model.mlmodel: truncated varint at byte 1021 (field 2 (VARINT)) in Model > Program > Function > Block > Operation
/// ```
package struct ModelFormatError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The kinds of problem the format layer reports.
    package enum Kind: Sendable, Equatable {
        /// A file or directory the model needs does not exist.
        case fileNotFound
        /// A file exists but cannot be read.
        case unreadableFile
        /// An `.mlpackage`'s `Manifest.json` is not valid JSON or lacks an entry the package needs.
        case invalidManifest
        /// The protobuf encoding of the specification is broken (truncated, bad tags, …).
        case malformedProtobuf
        /// The protobuf is well formed but holds a value the schema does not allow.
        case invalidSpecification
        /// The model is of a kind Tessera does not run (e.g. a NeuralNetwork or a tree ensemble).
        case unsupportedModelType
        /// A `weight.bin` header or blob record is invalid, out of bounds, or of the wrong type.
        case invalidWeightFile
    }

    /// What was wrong.
    package var kind: Kind
    /// The file the problem is in, as a short path (e.g. `model.mlmodel`, `weights/weight.bin`).
    package var file: String
    /// A sentence describing the problem and where in the file it is.
    package var message: String
    /// The protobuf messages being decoded when the problem was found, outermost first.
    package var messagePath: [String]

    /// Creates an error.
    package init(_ kind: Kind, file: String = "", _ message: String, messagePath: [String] = []) {
        self.kind = kind
        self.file = file
        self.message = message
        self.messagePath = messagePath
    }

    /// `file: message in Outer > Inner`.
    package var description: String {
        var text = file.isEmpty ? message : "\(file): \(message)"
        if !messagePath.isEmpty {
            text += " in " + messagePath.joined(separator: " > ")
        }
        return text
    }
}
