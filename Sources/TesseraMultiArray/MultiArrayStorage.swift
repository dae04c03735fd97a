import Foundation
import TesseraKernels

/// The memory behind an ``MLMultiArray``, and who may write it.
///
/// Three kinds, chosen by how the array was made:
///
/// - **owned**: Tessera allocated it (`init(shape:dataType:)`, conversions). Writable in place
///   while no shaped array or tensor shares it; otherwise the array copies it before a write
///   (see ``MLMultiArray``'s "Sharing and copies").
/// - **wrapped**: the caller's memory from `init(dataPointer:shape:dataType:strides:deallocator:)`.
///   Always written in place; the caller's `deallocator` runs when the last user lets go.
/// - **borrowed**: a shaped array's or tensor's memory, shared without a copy. Never written:
///   the first write access copies it into owned memory.
final class MultiArrayStorage {
    /// How the memory may be written.
    enum Kind {
        case owned
        case wrapped
        case borrowed
    }

    /// Element `[0, 0, …]`: strides are measured from here.
    let pointer: UnsafeMutableRawPointer
    /// The bytes from `pointer` to the end of the farthest element.
    let byteCount: Int
    let kind: Kind
    /// The owned buffer, if any.
    private let buffer: AlignedBuffer?
    /// Keeps borrowed memory alive.
    private let owner: AnyObject?
    /// Releases wrapped memory.
    private let deallocator: ((UnsafeMutableRawPointer) -> Void)?

    /// Fresh owned memory of `byteCount` bytes, zero-filled when `zeroed`.
    init(allocating byteCount: Int, zeroed: Bool) {
        let buffer = AlignedBuffer(unpooledByteCount: byteCount)
        if zeroed && byteCount > 0 { memset(buffer.pointer, 0, byteCount) }
        self.pointer = buffer.pointer
        self.byteCount = byteCount
        self.kind = .owned
        self.buffer = buffer
        self.owner = nil
        self.deallocator = nil
    }

    /// The caller's memory, written in place; `deallocator` runs on release.
    init(wrapping pointer: UnsafeMutableRawPointer, byteCount: Int, deallocator: ((UnsafeMutableRawPointer) -> Void)?) {
        self.pointer = pointer
        self.byteCount = byteCount
        self.kind = .wrapped
        self.buffer = nil
        self.owner = nil
        self.deallocator = deallocator
    }

    /// Another object's memory, read only; `owner` is kept alive.
    init(borrowing pointer: UnsafeRawPointer, byteCount: Int, owner: AnyObject) {
        self.pointer = UnsafeMutableRawPointer(mutating: pointer)
        self.byteCount = byteCount
        self.kind = .borrowed
        self.buffer = nil
        self.owner = owner
        self.deallocator = nil
    }

    /// An owned copy of the same bytes (so the same strides address the same elements).
    func ownedCopy() -> MultiArrayStorage {
        let copy = MultiArrayStorage(allocating: byteCount, zeroed: false)
        if byteCount > 0 { copy.pointer.copyMemory(from: pointer, byteCount: byteCount) }
        return copy
    }

    deinit {
        deallocator?(pointer)
    }
}

/// Keeps a multi-array's storage alive while shaped arrays and tensors read it; the storage
/// itself is not `Sendable`, this box is.
///
/// `@unchecked Sendable`: shaped arrays and tensors only read the memory, and a multi-array
/// copies owned or borrowed memory before writing while such a reader exists (the check is
/// the box's reference to the storage). Only memory the caller wrapped, or writes through a
/// `dataPointer` taken before the reader was made, can change under a reader; both are
/// documented on ``MLMultiArray``.
final class MultiArrayStorageOwner: @unchecked Sendable {
    let storage: MultiArrayStorage
    init(_ storage: MultiArrayStorage) { self.storage = storage }
}
