import Foundation
import TesseraModels
import TesseraTensor

/// A loaded model as the C ABI holds it: the model and its description, encoded once.
///
/// Handed to C as an opaque pointer (`Unmanaged`, retained once by `tessera_model_load`,
/// released by `tessera_model_free`). `MLModel` is `Sendable`, so one handle may be used by
/// any number of threads at once.
final class ModelHandle: Sendable {
    /// The model.
    let model: MLModel
    /// ``ModelDescriptionJSON`` of the model, UTF-8.
    let descriptionJSON: String

    /// Wraps a loaded model.
    init(model: MLModel) throws {
        self.model = model
        self.descriptionJSON = try ModelDescriptionJSON(model.modelDescription).encoded()
    }

    /// The handle behind an opaque pointer.
    static func from(_ pointer: UnsafeMutableRawPointer) -> ModelHandle {
        Unmanaged<ModelHandle>.fromOpaque(pointer).takeUnretainedValue()
    }
}

/// Loads an `.mlpackage`, `.mlmodel` or compiled model; returns an opaque handle, or nil with
/// the error in the out-parameters.
///
/// - Parameters:
///   - path: The model's path, UTF-8.
///   - computeUnits: ``MLComputeUnits`` raw value (0 CPU only, 1 CPU and GPU, 2 all, 3 CPU and
///     Neural Engine); every value runs on the CPU on Linux.
///   - functionName: The function of a multi-function program to load, or nil for the default.
///
/// ```c
/// void *model = tessera_model_load("Digits.mlpackage", 2, NULL, &code, &message);
/// ```
@_cdecl("tessera_model_load")
public func modelLoad(
    _ path: UnsafePointer<CChar>, _ computeUnits: Int32, _ functionName: UnsafePointer<CChar>?,
    _ errorCode: UnsafeMutablePointer<Int32>?, _ errorMessage: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
) -> UnsafeMutableRawPointer? {
    catchingErrors(code: errorCode, message: errorMessage) {
        let configuration = MLModelConfiguration()
        guard let units = MLComputeUnits(rawValue: Int(computeUnits)) else {
            throw CABIError(code: CABIError.badArgument, "compute units \(computeUnits) is not an MLComputeUnits value")
        }
        configuration.computeUnits = units
        configuration.functionName = functionName.map { String(cString: $0) }
        let model = try MLModel(contentsOf: URL(fileURLWithPath: String(cString: path)), configuration: configuration)
        return Unmanaged.passRetained(try ModelHandle(model: model)).toOpaque()
    }
}

/// Releases a handle from `tessera_model_load`. Predictions running on other threads keep
/// the model alive until they finish.
///
/// ```c
/// tessera_model_free(model);
/// ```
@_cdecl("tessera_model_free")
public func modelFree(_ handle: UnsafeMutableRawPointer?) {
    guard let handle else { return }
    Unmanaged<ModelHandle>.fromOpaque(handle).release()
}

/// The model's description as JSON (see ``ModelDescriptionJSON``), a `malloc`-ed string the
/// caller frees with `tessera_string_free`.
///
/// ```c
/// char *json = tessera_model_description(model);
/// ```
@_cdecl("tessera_model_description")
public func modelDescription(_ handle: UnsafeMutableRawPointer) -> UnsafeMutablePointer<CChar>? {
    strdup(ModelHandle.from(handle).descriptionJSON)
}

/// Compiles an `.mlpackage` or `.mlmodel` into a new temporary directory and returns its
/// path (`malloc`-ed, freed with `tessera_string_free`), or nil with the error in the
/// out-parameters.
///
/// ```c
/// char *compiled = tessera_compile_model("Digits.mlpackage", &code, &message);
/// ```
@_cdecl("tessera_compile_model")
public func compileModel(
    _ path: UnsafePointer<CChar>, _ errorCode: UnsafeMutablePointer<Int32>?,
    _ errorMessage: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
) -> UnsafeMutablePointer<CChar>? {
    catchingErrors(code: errorCode, message: errorMessage) {
        strdup(try MLModel.compileModel(at: URL(fileURLWithPath: String(cString: path))).path)
    } ?? nil
}
