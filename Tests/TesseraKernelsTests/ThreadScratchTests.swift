import CTesseraSIMD
import Foundation
import Synchronization
import Testing

@testable import TesseraKernels

@Suite("ThreadScratch")
struct ThreadScratchTests {
    @Test("a thread gets its block back, aligned, grown to the largest request")
    func reusesItsBlock() {
        let first = ThreadScratch.withFloats(count: 1000) { scratch in
            scratch.initialize(repeating: 1, count: 1000)
            return UInt(bitPattern: scratch)
        }
        let again = ThreadScratch.withFloats(count: 10) { UInt(bitPattern: $0) }
        #expect(first % 64 == 0)
        guard ThreadScratch.isEnabled else { return }
        #expect(again == first)
        ThreadScratch.withFloats(count: 100_000) { scratch in
            scratch.initialize(repeating: 2, count: 100_000)
            #expect(UInt(bitPattern: scratch) % 64 == 0)
            #expect(tessera_thread_scratch_bytes() >= 100_000 * MemoryLayout<Float>.stride)
        }
    }

    @Test("nested requests get distinct blocks: two slots, then the pool")
    func nestedBlocksAreDistinct() {
        ThreadScratch.withFloats(count: 64) { a in
            ThreadScratch.withFloats(count: 64) { b in
                ThreadScratch.withFloats(count: 64) { c in
                    a.initialize(repeating: 1, count: 64)
                    b.initialize(repeating: 2, count: 64)
                    c.initialize(repeating: 3, count: 64)
                    #expect(Set([a, b, c].map { UInt(bitPattern: $0) }).count == 3)
                    #expect((0..<64).allSatisfy { a[$0] == 1 && b[$0] == 2 && c[$0] == 3 })
                }
            }
        }
    }

    @Test("requests above the largest block and of zero floats still get memory")
    func largeAndEmptyRequests() {
        let count = ThreadScratch.largestBytes / MemoryLayout<Float>.stride + 16
        ThreadScratch.withFloats(count: count) { scratch in
            scratch[count - 1] = 7
            #expect(scratch[count - 1] == 7)
        }
        ThreadScratch.withFloats(count: 0) { scratch in
            scratch[0] = 5
            #expect(scratch[0] == 5)
        }
    }

    @Test("threads running at once never share a block")
    func threadsHaveTheirOwnBlocks() {
        let clashes = Atomic<Int>(0)
        let threads = 4
        DispatchQueue.concurrentPerform(iterations: threads * 8) { index in
            ThreadScratch.withFloats(count: 4096) { scratch in
                let mark = Float(index)
                scratch.initialize(repeating: mark, count: 4096)
                usleep(200)
                if !(0..<4096).allSatisfy({ scratch[$0] == mark }) { clashes.add(1, ordering: .relaxed) }
            }
        }
        #expect(clashes.load(ordering: .relaxed) == 0)
    }
}
