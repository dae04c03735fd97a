import Foundation
import Testing

@testable import TesseraKernels

/// The one memory owner: who may write, and what each owner releases.
@Suite("TensorStorage")
struct TensorStorageTests {
    @Test("only Tessera's own memory is owned; only wrapped memory is written in place")
    func writability() {
        let buffer = TensorStorage(buffer: AlignedBuffer(unpooledByteCount: 8))
        let allocated = TensorStorage(
            takingOwnershipOf: UnsafeMutableRawPointer.allocate(byteCount: 8, alignment: 8), byteCount: 8)
        let adopted = TensorStorage(adopting: buffer.pointer, byteCount: 8, release: nil)
        let wrapped = TensorStorage(wrapping: buffer.pointer, byteCount: 8, deallocator: nil)
        let borrowed = TensorStorage(borrowing: buffer.pointer, byteCount: 8, keepAlive: buffer)
        #expect([buffer, allocated, adopted, wrapped, borrowed].map(\.isOwned) == [true, true, false, false, false])
        #expect(
            [buffer, allocated, adopted, wrapped, borrowed].map(\.isWrapped) == [false, false, false, true, false])
        #expect(
            [buffer, allocated, adopted, wrapped, borrowed].map(\.ownerKind) == [
                "buffer", "allocated", "adopted", "wrapped", "borrowed",
            ])
    }

    @Test("adopted and wrapped memory run the caller's release once, when the storage is freed")
    func releaseRunsOnce() {
        let memory = UnsafeMutableRawPointer.allocate(byteCount: 16, alignment: 16)
        defer { memory.deallocate() }
        let calls = Counter()
        var adopted: TensorStorage? = TensorStorage(
            adopting: memory, byteCount: 16,
            deallocator: .custom { pointer, count in
                #expect(pointer == memory && count == 16)
                calls.value += 1
            })
        #expect(adopted != nil && calls.value == 0)
        adopted = nil
        #expect(calls.value == 1)

        var wrapped: TensorStorage? = TensorStorage(
            wrapping: memory, byteCount: 16,
            deallocator: { pointer in
                #expect(pointer == memory)
                calls.value += 1
            })
        #expect(wrapped != nil && calls.value == 1)
        wrapped = nil
        #expect(calls.value == 2)
    }

    @Test("borrowed storage keeps its owner alive; an owned copy has the same bytes in new memory")
    func borrowingAndCopies() {
        weak var weakOwner: TensorStorage?
        var borrowed: TensorStorage?
        do {
            let owner = TensorStorage.allocateUnpooled(byteCount: 4, zeroed: true)
            owner.pointer.storeBytes(of: 0x1234_5678, as: UInt32.self)
            weakOwner = owner
            borrowed = TensorStorage(borrowing: owner.pointer, byteCount: 4, keepAlive: owner)
        }
        #expect(weakOwner != nil)
        let copy = borrowed!.ownedCopy()
        #expect(copy.isOwned && copy.pointer != borrowed!.pointer && copy.byteCount == 4)
        #expect(copy.pointer.load(as: UInt32.self) == 0x1234_5678)
        borrowed = nil
        #expect(weakOwner == nil)
    }
}

/// Counts release calls (the releases under test run on this thread, in `deinit`).
private final class Counter {
    var value = 0
}
