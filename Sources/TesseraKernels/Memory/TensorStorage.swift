import Foundation

/// Memory that holds elements — of a tensor, a shaped array or a multi-array — kept alive by
/// reference, with who owns it and so who may write it.
///
/// Every array type in Tessera keeps its elements in a `TensorStorage`; what differs is the
/// ``Owner``:
///
/// - ``Owner/buffer(_:)`` and ``Owner/allocated``: Tessera's own memory. An array that holds
///   the only reference may write it in place (copy-on-write).
/// - ``Owner/adopted(release:)``: the caller's memory handed over without a copy
///   (`bytesNoCopy` initializers). Never written; the first mutation of an array copies it.
/// - ``Owner/wrapped(release:)``: the caller's memory that stays the caller's
///   (`MLMultiArray(dataPointer:…)`): always written in place.
/// - ``Owner/borrowed(keepAlive:)``: another storage's (or object's) memory shared without a
///   copy, that object kept alive. Never written.
///
/// `@unchecked Sendable`: the storage never touches its memory itself. Arrays write only memory
/// they may write by the rules above, after `isKnownUniquelyReferenced` proves no other value
/// can see it (owned memory), the same discipline as `Array`.
///
/// ```swift
/// let storage = TensorStorage(buffer: AlignedBuffer(unpooledByteCount: 16))
/// let view = TensorStorage(borrowing: storage.pointer, byteCount: 16, keepAlive: storage)
/// view.isOwned    // false: a shaped array over `view` copies before writing
/// ```
package final class TensorStorage: @unchecked Sendable {
    /// Who owns the memory, and so who may write it and how it is released.
    package enum Owner: @unchecked Sendable {
        /// An aligned buffer (pooled or not), released with the storage.
        case buffer(AlignedBuffer)
        /// Memory from `UnsafeMutableRawPointer.allocate`, deallocated with the storage.
        case allocated
        /// The caller's memory, never written; `release` runs when the storage is freed.
        case adopted(release: (@Sendable () -> Void)?)
        /// The caller's memory, written in place; `release` runs when the storage is freed.
        case wrapped(release: (@Sendable () -> Void)?)
        /// Another object's memory, never written; the object is kept alive.
        case borrowed(keepAlive: AnyObject)
    }

    /// The start of the memory; layouts measure their offsets from here.
    package let pointer: UnsafeMutableRawPointer
    /// The number of bytes.
    package let byteCount: Int
    /// Who owns the memory.
    package let owner: Owner

    /// Storage over `byteCount` bytes at `pointer` owned by `owner`.
    package init(pointer: UnsafeMutableRawPointer, byteCount: Int, owner: Owner) {
        self.pointer = pointer
        self.byteCount = byteCount
        self.owner = owner
    }

    /// Storage backed by a pool (or unpooled) buffer, all of its bytes.
    package convenience init(buffer: AlignedBuffer) {
        self.init(pointer: buffer.pointer, byteCount: buffer.byteCount, owner: .buffer(buffer))
    }

    /// Storage that takes over memory allocated with `UnsafeMutableRawPointer.allocate` and
    /// deallocates it when freed.
    package convenience init(takingOwnershipOf pointer: UnsafeMutableRawPointer, byteCount: Int) {
        self.init(pointer: pointer, byteCount: byteCount, owner: .allocated)
    }

    /// Storage that adopts the caller's memory, never written; `release` runs when it is freed.
    package convenience init(adopting pointer: UnsafeRawPointer, byteCount: Int, release: (@Sendable () -> Void)?) {
        self.init(
            pointer: UnsafeMutableRawPointer(mutating: pointer), byteCount: byteCount, owner: .adopted(release: release)
        )
    }

    /// Storage that adopts the caller's memory, never written, released with a Foundation
    /// deallocator (`.free`, `.none`, `.custom`, `.unmap`, …) exactly as `Data` would: by
    /// handing the memory to a `Data` and dropping it.
    package convenience init(adopting pointer: UnsafeRawPointer, byteCount: Int, deallocator: Data.Deallocator) {
        let memory = UnsafeMutableRawPointer(mutating: pointer)
        let release = UncheckedRelease { _ = Data(bytesNoCopy: memory, count: byteCount, deallocator: deallocator) }
        self.init(pointer: memory, byteCount: byteCount, owner: .adopted(release: { release.run() }))
    }

    /// Storage over the caller's memory, written in place; `deallocator` runs with `pointer`
    /// when the storage is freed (`MLMultiArray(dataPointer:…deallocator:)`).
    package convenience init(
        wrapping pointer: UnsafeMutableRawPointer, byteCount: Int, deallocator: ((UnsafeMutableRawPointer) -> Void)?
    ) {
        var release: (@Sendable () -> Void)? = nil
        if let deallocator {
            let action = UncheckedRelease { deallocator(pointer) }
            release = { action.run() }
        }
        self.init(pointer: pointer, byteCount: byteCount, owner: .wrapped(release: release))
    }

    /// Storage over another object's memory (no copy), never written; `keepAlive` is retained.
    package convenience init(borrowing pointer: UnsafeRawPointer, byteCount: Int, keepAlive: AnyObject) {
        self.init(
            pointer: UnsafeMutableRawPointer(mutating: pointer), byteCount: byteCount,
            owner: .borrowed(keepAlive: keepAlive))
    }

    /// Allocates `count` elements of `type` from the shared pool.
    ///
    /// Traps (with the pool's message) when the pool's memory limit refuses: MLTensor
    /// operations are non-throwing by contract.
    package static func allocate(count: Int, type: KernelScalarType) -> TensorStorage {
        do {
            return TensorStorage(buffer: try BufferPool.shared.allocate(byteCount: count * type.byteCount))
        } catch {
            kernelFailure("[MLTensor] \(error)")
        }
    }

    /// Fresh owned memory of `byteCount` bytes outside the pool (for arrays that outlive a
    /// computation), zero-filled when `zeroed`.
    package static func allocateUnpooled(byteCount: Int, zeroed: Bool = false) -> TensorStorage {
        let buffer = AlignedBuffer(unpooledByteCount: byteCount)
        if zeroed && byteCount > 0 { memset(buffer.pointer, 0, byteCount) }
        return TensorStorage(buffer: buffer)
    }

    /// Whether Tessera owns the memory (``Owner/buffer(_:)``, ``Owner/allocated``): an array
    /// holding the only reference may write it in place.
    package var isOwned: Bool {
        switch owner {
        case .buffer, .allocated: true
        case .adopted, .wrapped, .borrowed: false
        }
    }

    /// Whether the memory is the caller's and always written in place (``Owner/wrapped(release:)``).
    package var isWrapped: Bool {
        if case .wrapped = owner { return true }
        return false
    }

    /// The owner's kind for debug output: `buffer`, `allocated`, `adopted`, `wrapped` or
    /// `borrowed`.
    package var ownerKind: String {
        switch owner {
        case .buffer: "buffer"
        case .allocated: "allocated"
        case .adopted: "adopted"
        case .wrapped: "wrapped"
        case .borrowed: "borrowed"
        }
    }

    /// A copy of the bytes in fresh owned memory (so the same strides address the same
    /// elements).
    package func ownedCopy() -> TensorStorage {
        let copy = TensorStorage.allocateUnpooled(byteCount: byteCount)
        if byteCount > 0 { copy.pointer.copyMemory(from: pointer, byteCount: byteCount) }
        return copy
    }

    deinit {
        switch owner {
        case .allocated: pointer.deallocate()
        case .adopted(let release), .wrapped(let release): release?()
        case .buffer, .borrowed: break
        }
    }
}

/// A caller's release action (a `Data.Deallocator`, a multi-array's deallocator closure),
/// which is not `Sendable`, run once from whichever thread frees the storage.
///
/// `@unchecked Sendable`: the action runs exactly once, in the storage's `deinit`, after every
/// other reference to the memory is gone.
private final class UncheckedRelease: @unchecked Sendable {
    private let action: () -> Void

    init(_ action: @escaping () -> Void) { self.action = action }

    func run() { action() }
}
