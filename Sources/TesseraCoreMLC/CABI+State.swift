import Foundation
import TesseraModels
import TesseraMultiArray

/// A model's state as the C ABI holds it (`Unmanaged`, released by `tessera_state_free`).
final class StateHandle {
    /// The state.
    let state: MLState

    init(state: MLState) { self.state = state }

    /// The handle behind an opaque pointer.
    static func from(_ pointer: UnsafeMutableRawPointer) -> StateHandle {
        Unmanaged<StateHandle>.fromOpaque(pointer).takeUnretainedValue()
    }
}

/// Allocates a zero-filled state for `model` (an empty one for a stateless model).
///
/// ```c
/// void *state = tessera_model_make_state(model);
/// ```
@_cdecl("tessera_model_make_state")
public func modelMakeState(_ handle: UnsafeMutableRawPointer) -> UnsafeMutableRawPointer {
    Unmanaged.passRetained(StateHandle(state: ModelHandle.from(handle).model.makeState())).toOpaque()
}

/// Releases a state from `tessera_model_make_state`.
///
/// ```c
/// tessera_state_free(state);
/// ```
@_cdecl("tessera_state_free")
public func stateFree(_ state: UnsafeMutableRawPointer?) {
    guard let state else { return }
    Unmanaged<StateHandle>.fromOpaque(state).release()
}

/// Copies the buffer of state `name` into `destination` (row-major, `byteCount` bytes:
/// exactly the buffer's size) when `write` is 0, or from `destination` into the buffer when
/// it is 1; returns 0, or -1 for an unknown name or a wrong size.
///
/// ```c
/// tessera_state_copy(state, "accumulator", values, sizeof values, 0);   // read
/// ```
@_cdecl("tessera_state_copy")
public func stateCopy(
    _ state: UnsafeMutableRawPointer, _ name: UnsafePointer<CChar>, _ destination: UnsafeMutableRawPointer,
    _ byteCount: Int, _ write: Int32
) -> Int32 {
    let state = StateHandle.from(state).state
    let name = String(cString: name)
    guard state.stateNames.contains(name) else { return -1 }
    let copied = state.withMultiArray(for: name) { buffer in
        write == 0
            ? ContiguousCopy.copy(buffer, to: destination, byteCount: byteCount)
            : ContiguousCopy.copy(UnsafeRawPointer(destination), byteCount: byteCount, into: buffer)
    }
    return copied ? 0 : -1
}
