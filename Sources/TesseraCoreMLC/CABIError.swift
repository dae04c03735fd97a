import Foundation
import TesseraModels

/// An error handed across the C ABI: Core ML's code (``MLModelError/Code`` raw values; `-1`
/// for an argument the binding itself got wrong) and Tessera's message.
///
/// The message is written to the caller's `errorMessage` out-parameter as a `malloc`-ed
/// UTF-8 string, which the caller frees with `tessera_string_free`.
///
/// ```swift
/// throw CABIError(code: CABIError.badArgument, "input \"x\" has rank 40; at most 32 dimensions")
/// ```
struct CABIError: Error {
    /// The code of an argument the binding passed wrongly (not a Core ML code).
    static let badArgument: Int32 = -1

    /// Core ML's error code, or ``badArgument``.
    var code: Int32
    /// What was wrong, as the Python exception prints it.
    var message: String

    /// An error with a code and a message.
    init(code: Int32, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The C ABI form of any error: an ``MLModelError`` keeps its code and message; anything
    /// else becomes `.generic` with its description.
    init(_ error: any Error) {
        switch error {
        case let error as CABIError: self = error
        case let error as MLModelError: self.init(code: Int32(error.code.rawValue), error.message)
        default: self.init(code: Int32(MLModelError.Code.generic.rawValue), "\(error)")
        }
    }

    /// Writes the error to the out-parameters (either may be nil) and returns its code.
    @discardableResult
    func write(
        code codePointer: UnsafeMutablePointer<Int32>?,
        message messagePointer: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
    ) -> Int32 {
        codePointer?.pointee = code
        messagePointer?.pointee = strdup(message)
        return code
    }
}

/// Runs `body`, writing any error it throws to the out-parameters; returns nil then.
func catchingErrors<T>(
    code: UnsafeMutablePointer<Int32>?, message: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?,
    _ body: () throws -> T
) -> T? {
    do {
        return try body()
    } catch {
        CABIError(error).write(code: code, message: message)
        return nil
    }
}

/// Frees a string the library returned (an error message or a description).
///
/// ```c
/// char *message = NULL;
/// if (!tessera_model_load(path, 2, NULL, &code, &message)) { puts(message); tessera_string_free(message); }
/// ```
@_cdecl("tessera_string_free")
public func stringFree(_ string: UnsafeMutablePointer<CChar>?) {
    free(string)
}

/// The version of the C ABI: the Python binding refuses a library of another version.
///
/// ```c
/// assert(tessera_abi_version() == 1);
/// ```
@_cdecl("tessera_abi_version")
public func abiVersion() -> Int32 { 1 }
