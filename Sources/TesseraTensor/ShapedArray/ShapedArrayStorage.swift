import Foundation
import TesseraKernels

/// The reference-counted memory behind ``MLShapedArray`` and ``MLShapedArraySlice``.
/// **Tessera-internal**: public only because ``_ShapedArrayCore`` names it.
///
/// Memory is either an `AlignedBuffer` the array owns (writable in place while uniquely
/// referenced) or adopted caller memory from `init(bytesNoCopy:...)`, released with the
/// caller's `Data.Deallocator`. Adopted memory comes in as `UnsafeRawPointer`, so it is never
/// written: the first mutation copies it into an owned buffer.
///
/// `@unchecked Sendable`: the class never touches its memory itself. Shaped arrays write only
/// after `isKnownUniquelyReferenced` proves no other value (on any thread) can see the memory,
/// the same copy-on-write discipline as `Array`.
public final class _ShapedArrayStorage: @unchecked Sendable {
    /// The start of the memory; layouts measure their offsets from here.
    let pointer: UnsafeMutableRawPointer
    /// The number of bytes the memory spans.
    let byteCount: Int
    /// The owned buffer, or `nil` for adopted memory.
    let buffer: AlignedBuffer?
    /// How to release adopted memory.
    private let deallocator: Data.Deallocator?
    /// Another owner whose memory this shares (an `MLTensor`'s storage), kept alive here.
    private let sharedOwner: AnyObject?

    /// Wraps an owned buffer (no copy).
    init(buffer: AlignedBuffer) {
        self.pointer = buffer.pointer
        self.byteCount = buffer.byteCount
        self.buffer = buffer
        self.deallocator = nil
        self.sharedOwner = nil
    }

    /// Shares memory another object owns (no copy); the memory is never written through
    /// this storage, so the first mutation of an array copies it.
    init(sharing pointer: UnsafeRawPointer, byteCount: Int, owner: AnyObject) {
        self.pointer = UnsafeMutableRawPointer(mutating: pointer)
        self.byteCount = byteCount
        self.buffer = nil
        self.deallocator = nil
        self.sharedOwner = owner
    }

    /// Adopts caller memory (no copy); `deallocator` runs when the last array lets go.
    init(adopting pointer: UnsafeRawPointer, byteCount: Int, deallocator: Data.Deallocator) {
        self.pointer = UnsafeMutableRawPointer(mutating: pointer)
        self.byteCount = byteCount
        self.buffer = nil
        self.deallocator = deallocator
        self.sharedOwner = nil
    }

    /// Newly allocated, uninitialized memory of `byteCount` bytes.
    static func allocate(byteCount: Int) -> _ShapedArrayStorage {
        _ShapedArrayStorage(buffer: AlignedBuffer(unpooledByteCount: byteCount))
    }

    /// Whether arrays may write into the memory when they are its only owner.
    var isWritable: Bool { buffer != nil }

    deinit {
        // Handing the memory to a `Data` and dropping it runs the deallocator exactly the way
        // Foundation defines each case (`.free`, `.none`, `.custom`, `.unmap`, ...).
        if let deallocator {
            _ = Data(bytesNoCopy: pointer, count: byteCount, deallocator: deallocator)
        }
    }
}
