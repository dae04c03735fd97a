import Synchronization
import Testing

@testable import TesseraKernels

@Suite("parallelFor")
struct ParallelForTests {
    @Test("every item runs exactly once, in aligned chunks", arguments: [0, 1, 7, 1000, 100_003])
    func coversRange(count: Int) {
        let hits = UnsafeMutablePointer<Int32>.allocate(capacity: max(count, 1))
        hits.initialize(repeating: 0, count: max(count, 1))
        defer { hits.deallocate() }
        let chunks = Atomic<Int>(0)
        let badStarts = Atomic<Int>(0)
        let pointer = UncheckedPointer(hits)
        parallelFor(count: count, cost: .transcendental, alignment: 16) { range in
            chunks.add(1, ordering: .relaxed)
            if range.lowerBound % 16 != 0 { badStarts.add(1, ordering: .relaxed) }
            for i in range { pointer.value[i] += 1 }
        }
        #expect((0..<count).allSatisfy { hits[$0] == 1 })
        #expect(badStarts.load(ordering: .relaxed) == 0)
        if count >= 100_000 && KernelThreads.coreBudget > 1 {
            #expect(chunks.load(ordering: .relaxed) > 1)
        }
    }

    @Test(
        "even chunks tile the items in order, start on alignment, and differ by at most one unit",
        arguments: [(36, 1, 8), (100_003, 16, 8), (10, 1, 8), (7, 2, 2), (1000, 16, 6)])
    func evenChunks(count: Int, alignment: Int, chunks: Int) {
        let units = (count + alignment - 1) / alignment
        let bounds = EvenChunks(count: count, units: units, chunks: chunks, alignment: alignment)
        let ranges = (0..<chunks).map(bounds.range)
        #expect(ranges.first?.lowerBound == 0 && ranges.last?.upperBound == count)
        #expect(zip(ranges, ranges.dropFirst()).allSatisfy { $0.upperBound == $1.lowerBound })
        #expect(ranges.allSatisfy { $0.lowerBound % alignment == 0 })
        // Every chunk but the last holds whole units; their unit counts differ by at most one.
        let sizes = ranges.dropLast().map { $0.count / alignment }
        #expect((sizes.max() ?? 0) - (sizes.min() ?? 0) <= 1, "\(ranges)")
        // 36 items in 8 chunks: two home runs of 18, not 20 and 16.
        if (count, alignment, chunks) == (36, 1, 8) {
            #expect(ranges[0..<4].map(\.count).reduce(0, +) == 18)
        }
    }

    @Test("inside withSerialLoops a large loop is one chunk on the calling thread; outside it splits again")
    func serialLoops() {
        let chunks = Atomic<Int>(0)
        let result = KernelThreads.withSerialLoops { () -> Int in
            parallelFor(count: 100_000, cost: .transcendental) { range in
                chunks.add(1, ordering: .relaxed)
                #expect(range == 0..<100_000)
            }
            return 42
        }
        #expect(result == 42)
        #expect(chunks.load(ordering: .relaxed) == 1)
        if KernelThreads.coreBudget > 1 {
            let after = Atomic<Int>(0)
            parallelFor(count: 100_000, cost: .transcendental) { _ in after.add(1, ordering: .relaxed) }
            #expect(after.load(ordering: .relaxed) > 1)
        }
    }

    @Test("a nested parallelFor runs serially on its caller's thread")
    func nested() {
        let innerChunks = Atomic<Int>(0)
        parallelFor(count: 100_000, cost: .transcendental) { _ in
            parallelFor(count: 100_000, cost: .transcendental) { _ in
                innerChunks.add(1, ordering: .relaxed)
            }
        }
        let outer = KernelThreads.coreBudget > 1 ? 2 : 1
        #expect(innerChunks.load(ordering: .relaxed) >= outer)
        #expect(innerChunks.load(ordering: .relaxed) <= 4 * KernelThreads.coreBudget)
    }
}

extension ParallelForTests {
    @Test("thousands of back-to-back loops, from four threads at once, each cover every item exactly once")
    func manyLoopsFromManyThreads() async {
        let count = 4_096
        await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<4 {
                group.addTask {
                    let hits = UnsafeMutablePointer<Int32>.allocate(capacity: count)
                    defer { hits.deallocate() }
                    let pointer = UncheckedPointer(hits)
                    for round in 0..<500 {
                        hits.initialize(repeating: 0, count: count)
                        // Enough estimated work to go parallel: 4,096 × 100 ns.
                        parallelFor(count: count, cost: ParallelCost(nanosecondsPerItem: 100)) { range in
                            for i in range { pointer.value[i] += Int32(1 + round % 3) }
                        }
                        let expected = Int32(1 + round % 3)
                        if !(0..<count).allSatisfy({ hits[$0] == expected }) { return false }
                    }
                    return true
                }
            }
            for await ok in group { #expect(ok) }
        }
    }
}

extension ParallelForTests {
    @Test(
        "the spinning workers run every chunk exactly once, with home chunks (up to 64) or one counter",
        arguments: [1, 2, 3, 8, 63, 64, 65, 200])
    func spinningWorkersCoverChunks(chunks: Int) {
        guard let workers = SpinningWorkers.shared else { return }
        let hits = UnsafeMutablePointer<Int32>.allocate(capacity: chunks)
        defer { hits.deallocate() }
        let pointer = UncheckedPointer(hits)
        for _ in 0..<200 {
            hits.initialize(repeating: 0, count: chunks)
            // Another thread's loop may hold the workers (tests run in parallel): then nothing
            // ran, and the caller would fall back to Dispatch.
            guard workers.run(chunks: chunks, { chunk in pointer.value[chunk] += 1 }) else { continue }
            #expect((0..<chunks).allSatisfy { hits[$0] == 1 }, "\(chunks) chunks")
        }
    }
}

struct UncheckedPointer<T>: @unchecked Sendable {
    let value: UnsafeMutablePointer<T>
    init(_ value: UnsafeMutablePointer<T>) { self.value = value }
}
