import Foundation
import TesseraKernels
import Testing

@Suite("Buffer pool")
struct BufferPoolTests {
    @Test("buffers are 64-byte aligned and size classes cover the request")
    func alignmentAndClasses() throws {
        let pool = BufferPool(memoryLimit: 1 << 24, cacheLimit: 1 << 22)
        for size in [0, 1, 63, 64, 65, 100, 1000, 4097, 100_000] {
            let buffer = try pool.allocate(byteCount: size)
            #expect(Int(bitPattern: buffer.pointer) % 64 == 0)
            #expect(buffer.capacity >= size)
            #expect(buffer.capacity <= max(64, size + size / 4 + 64))
        }
    }

    @Test("released buffers are reused and counted")
    func reuse() throws {
        let pool = BufferPool(memoryLimit: 1 << 24, cacheLimit: 1 << 22)
        var first: AlignedBuffer? = try pool.allocate(byteCount: 5000)
        let address = first!.pointer
        #expect(pool.statistics.liveBytes == first!.capacity)
        first = nil
        #expect(pool.statistics.liveBytes == 0)
        #expect(pool.statistics.cachedBytes > 0)
        let second = try pool.allocate(byteCount: 4900)
        #expect(second.pointer == address)
        #expect(pool.statistics.reuses == 1)
        #expect(pool.statistics.allocations == 2)
    }

    @Test("allocation past the memory limit throws a typed error")
    func limit() throws {
        let pool = BufferPool(memoryLimit: 10_000, cacheLimit: 0)
        let held = try pool.allocate(byteCount: 8000)
        #expect(throws: BufferPoolError.self) { try pool.allocate(byteCount: 8000) }
        #expect(pool.statistics.refusals == 1)
        #expect(throws: BufferPoolError.invalidSize(-1)) { try pool.allocate(byteCount: -1) }
        _ = held
    }

    @Test("the cache limit bounds what is kept")
    func cacheLimit() throws {
        let pool = BufferPool(memoryLimit: 1 << 24, cacheLimit: 10_000)
        do {
            let a = try pool.allocate(byteCount: 6000)
            let b = try pool.allocate(byteCount: 6000)
            _ = (a, b)
        }
        #expect(pool.statistics.cachedBytes <= 10_000)
        pool.trim()
        #expect(pool.statistics.cachedBytes == 0)
    }

    @Test("a reservation is refused past the limit or the budget, before its body runs")
    func reservationRefused() throws {
        let pool = BufferPool(memoryLimit: 1 << 20, cacheLimit: 1 << 18)
        let held = try pool.allocate(byteCount: 600_000)
        var ran = false
        #expect(throws: BufferPoolError.memoryLimitExceeded(requested: 500_000, live: held.capacity, limit: 1 << 20)) {
            try pool.withReservation(of: 500_000, budget: nil) { ran = true }
        }
        #expect(throws: BufferPoolError.budgetExceeded(requested: 300_000, budget: 200_000)) {
            try pool.withReservation(of: 300_000, budget: 200_000) { ran = true }
        }
        #expect(!ran)
        #expect(pool.reservedBytes == 0)
        #expect(pool.statistics.refusals == 1)
    }

    @Test("inside a reservation its own allocations are not refused; outside, others see it")
    func reservationCovers() throws {
        let pool = BufferPool(memoryLimit: 1 << 20, cacheLimit: 1 << 18)
        let capacity = try pool.withReservation(of: 800_000, budget: nil) { () -> Int in
            #expect(pool.reservedBytes == 800_000)
            // Counted twice (reserved and live), over the limit, and still granted.
            let buffer = try? pool.allocate(byteCount: 700_000)
            return buffer?.capacity ?? 0
        }
        #expect(capacity >= 700_000)
        #expect(pool.reservedBytes == 0)
        try pool.withReservation(of: 800_000, budget: nil) {
            // Another thread (here: a detached task) is refused while the reservation holds.
            let refused = DetachedAllocation.run { (try? pool.allocate(byteCount: 300_000)) == nil }
            #expect(refused)
        }
    }

    @Test(
        "byte counts with K, M, G suffixes",
        arguments: [
            ("1024", 1024), ("8M", 8 << 20), ("8MiB", 8 << 20), ("2g", 2 << 30), ("512 K", nil), (" 3K ", 3 << 10),
            ("0", nil), ("-5", nil), ("lots", nil), ("9999999999T", nil),
        ] as [(String, Int?)])
    func byteCounts(text: String, value: Int?) {
        #expect(BufferPool.parseByteCount(text) == value)
    }
}

/// Runs a closure on a thread outside the caller's task (so task-locals do not carry over)
/// and waits for it.
enum DetachedAllocation {
    static func run(_ body: @escaping @Sendable () -> Bool) -> Bool {
        final class Box: @unchecked Sendable { var value = false }
        let box = Box()
        let done = DispatchSemaphore(value: 0)
        Thread {
            box.value = body()
            done.signal()
        }.start()
        done.wait()
        return box.value
    }
}
