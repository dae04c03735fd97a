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
}
