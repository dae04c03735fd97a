import Foundation
import Synchronization

/// Why the pool refused an allocation.
package enum BufferPoolError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Granting the request would put more than `limit` bytes in live buffers.
    case memoryLimitExceeded(requested: Int, live: Int, limit: Int)
    /// A negative size was asked for.
    case invalidSize(Int)
    /// A computation planned to need `requested` bytes, more than the `budget` its caller set.
    case budgetExceeded(requested: Int, budget: Int)

    package var description: String {
        switch self {
        case .budgetExceeded(let requested, let budget):
            return "BufferPool: the computation needs \(requested) bytes, more than its budget of \(budget) bytes"
        case .memoryLimitExceeded(let requested, let live, let limit):
            return "BufferPool: allocating \(requested) bytes would exceed the memory limit of \(limit) bytes "
                + "(\(live) bytes are live); raise BufferPool.memoryLimit or release tensors"
        case .invalidSize(let size):
            return "BufferPool: cannot allocate a negative number of bytes (\(size))"
        }
    }
}

/// A size-bucketed cache of 64-byte-aligned buffers, with a cap on live memory.
///
/// Requests round up to a size class (four classes per power of two, at least 64 bytes), so
/// a buffer released by one operation is reused by the next of similar size without going
/// back to the system allocator. Two limits apply:
///
/// - ``memoryLimit``: the most bytes that may be live (handed out and not yet released) at
///   once. An allocation beyond it throws ``BufferPoolError/memoryLimitExceeded(requested:live:limit:)``.
/// - ``cacheLimit``: the most bytes kept for reuse after release; beyond it, released buffers
///   are freed, oldest size classes first.
///
/// A computation whose peak is known before it runs (a graph plan) can **reserve** it
/// (``withReservation(of:budget:_:)``): the reservation counts against the memory limit
/// like live bytes, so it is refused up front, by a thrown error, instead of by an allocation
/// halfway through; the body's own allocations on its thread are then never refused.
///
/// The pool is thread-safe.
///
/// ```swift
/// let pool = BufferPool(memoryLimit: 1 << 30, cacheLimit: 256 << 20)
/// let a = try pool.allocate(byteCount: 4096)
/// print(pool.statistics.liveBytes)   // 4096
/// ```
@usableFromInline package final class BufferPool: Sendable {
    /// Counters describing the pool's use since it was made.
    package struct Statistics: Sendable, Equatable, CustomStringConvertible {
        /// Allocations served.
        package var allocations = 0
        /// Allocations served from the cache.
        package var reuses = 0
        /// Allocations refused for the memory limit.
        package var refusals = 0
        /// Bytes (size classes) currently handed out.
        package var liveBytes = 0
        /// The most bytes ever live at once.
        package var peakLiveBytes = 0
        /// Bytes held in the cache for reuse.
        package var cachedBytes = 0

        package var description: String {
            "allocations \(allocations), reuses \(reuses), refusals \(refusals), live \(liveBytes) B, "
                + "peak \(peakLiveBytes) B, cached \(cachedBytes) B"
        }
    }

    struct State {
        var memoryLimit: Int
        var cacheLimit: Int
        /// Bytes reserved by computations running now (``withReservation(of:budget:_:)``).
        var reservedBytes = 0
        /// Cached blocks by size class, as addresses (plain integers, so the state stays `Sendable`).
        var freeLists: [Int: [UInt]] = [:]
        var statistics = Statistics()
    }

    private let state: Mutex<State>

    /// The environment variable that sets the shared pool's memory limit, read once when the
    /// pool is first used: bytes, or a number with a `K`, `M` or `G` suffix (powers of 1024),
    /// e.g. `TESSERA_MEMORY_LIMIT=2G`.
    package static let memoryLimitVariable = "TESSERA_MEMORY_LIMIT"

    /// The pool the kernels and the graph use unless told otherwise.
    ///
    /// Its memory limit is ``memoryLimitVariable``'s value when that is set and valid, else 80%
    /// of physical memory; its cache limit is 1/8 of the limit.
    package static let shared: BufferPool = {
        let physical = Int(clamping: ProcessInfoShim.physicalMemory)
        let variable = ProcessInfo.processInfo.environment[memoryLimitVariable]
        let limit = variable.flatMap(parseByteCount) ?? physical / 10 * 8
        return BufferPool(memoryLimit: limit, cacheLimit: limit / 8)
    }()

    /// A byte count written as digits with an optional `K`, `M` or `G` suffix (also `KB`,
    /// `KiB`, …; powers of 1024), or `nil` when it is not one or is not positive.
    ///
    /// ```swift
    /// BufferPool.parseByteCount("512M")   // 536_870_912
    /// ```
    package static func parseByteCount(_ text: String) -> Int? {
        var digits = Substring(text.trimmingCharacters(in: .whitespaces).uppercased())
        for suffix in ["IB", "B"] where digits.hasSuffix(suffix) { digits = digits.dropLast(suffix.count) }
        var shift = 0
        if let last = digits.last, let index = ["K", "M", "G", "T"].firstIndex(of: String(last)) {
            shift = 10 * (index + 1)
            digits = digits.dropLast()
        }
        guard let value = Int(digits), value > 0, value <= Int.max >> shift else { return nil }
        return value << shift
    }

    /// A pool with the given limits, in bytes.
    package init(memoryLimit: Int, cacheLimit: Int) {
        state = Mutex(State(memoryLimit: memoryLimit, cacheLimit: cacheLimit))
    }

    deinit {
        state.withLock { state in
            for (_, list) in state.freeLists {
                for address in list { UnsafeMutableRawPointer(bitPattern: address)?.deallocate() }
            }
            state.freeLists = [:]
        }
    }

    /// The most bytes that may be live at once.
    package var memoryLimit: Int {
        get { state.withLock { $0.memoryLimit } }
        set { state.withLock { $0.memoryLimit = newValue } }
    }

    /// The most bytes kept for reuse; lowering it frees cached buffers at once.
    package var cacheLimit: Int {
        get { state.withLock { $0.cacheLimit } }
        set {
            state.withLock { state in
                state.cacheLimit = newValue
                BufferPool.evict(&state, toFit: 0)
            }
        }
    }

    /// A snapshot of the counters.
    package var statistics: Statistics { state.withLock { $0.statistics } }

    /// Bytes reserved by computations running now.
    package var reservedBytes: Int { state.withLock { $0.reservedBytes } }

    /// Whether the calling thread (or task) runs inside a reservation, so its allocations are
    /// not refused.
    @TaskLocal static var isInsideReservation = false

    /// Runs `body` with `byteCount` bytes reserved: refused up front when they exceed `budget`
    /// or do not fit under ``memoryLimit`` next to the live and reserved bytes, and then held
    /// until `body` returns. While it runs, allocations on this thread are not refused (the
    /// reservation covers them; they count as live bytes too, so others see the computation
    /// twice over, never less).
    ///
    /// - Throws: ``BufferPoolError/budgetExceeded(requested:budget:)`` or
    ///   ``BufferPoolError/memoryLimitExceeded(requested:live:limit:)`` (`live` counting the
    ///   reservations) before `body` runs.
    ///
    /// ```swift
    /// let sum = try pool.withReservation(of: plan.peakBytes, budget: nil) { run(plan) }
    /// ```
    package func withReservation<Result>(of byteCount: Int, budget: Int?, _ body: () -> Result) throws(BufferPoolError)
        -> Result
    {
        let bytes = Swift.max(byteCount, 0)
        if let budget, bytes > budget { throw .budgetExceeded(requested: bytes, budget: budget) }
        try state.withLock { (state) throws(BufferPoolError) in
            let committed = state.statistics.liveBytes + state.reservedBytes
            guard bytes <= state.memoryLimit - committed else {
                state.statistics.refusals += 1
                throw .memoryLimitExceeded(requested: bytes, live: committed, limit: state.memoryLimit)
            }
            state.reservedBytes += bytes
        }
        defer { state.withLock { $0.reservedBytes -= bytes } }
        return BufferPool.$isInsideReservation.withValue(true) { body() }
    }

    /// The size class a request of `byteCount` bytes is served from.
    ///
    /// At least 64 bytes; above that, four classes per power of two (x, 1.25x, 1.5x, 1.75x).
    package static func sizeClass(for byteCount: Int) -> Int {
        if byteCount <= 64 { return 64 }
        let highBit = Int.bitWidth - 1 - (byteCount - 1).leadingZeroBitCount  // floor(log2(byteCount - 1))
        let base = 1 << highBit
        let step = Swift.max(base / 4, 64)
        return (byteCount + step - 1) / step * step
    }

    /// Hands out a buffer of at least `byteCount` bytes, reusing a cached one when possible.
    ///
    /// - Throws: ``BufferPoolError/memoryLimitExceeded(requested:live:limit:)`` when the live
    ///   total would pass ``memoryLimit``; ``BufferPoolError/invalidSize(_:)`` for a negative size.
    package func allocate(byteCount: Int) throws(BufferPoolError) -> AlignedBuffer {
        guard byteCount >= 0 else { throw .invalidSize(byteCount) }
        let capacity = BufferPool.sizeClass(for: byteCount)
        let reused: UInt? = try state.withLock { (state) throws(BufferPoolError) -> UInt? in
            if state.statistics.liveBytes + state.reservedBytes + capacity > state.memoryLimit,
                !BufferPool.isInsideReservation
            {
                state.statistics.refusals += 1
                throw .memoryLimitExceeded(
                    requested: byteCount, live: state.statistics.liveBytes, limit: state.memoryLimit)
            }
            state.statistics.allocations += 1
            state.statistics.liveBytes += capacity
            state.statistics.peakLiveBytes = Swift.max(state.statistics.peakLiveBytes, state.statistics.liveBytes)
            if let address = state.freeLists[capacity]?.popLast() {
                state.statistics.reuses += 1
                state.statistics.cachedBytes -= capacity
                return address
            }
            return nil
        }
        let pointer =
            reused.flatMap { UnsafeMutableRawPointer(bitPattern: $0) }
            ?? UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: AlignedBuffer.alignment)
        return AlignedBuffer(pointer: pointer, byteCount: byteCount, capacity: capacity, pool: self)
    }

    /// Frees every cached buffer.
    package func trim() {
        state.withLock { state in
            for (_, list) in state.freeLists {
                for address in list { UnsafeMutableRawPointer(bitPattern: address)?.deallocate() }
            }
            state.freeLists = [:]
            state.statistics.cachedBytes = 0
        }
    }

    func recycle(_ pointer: UnsafeMutableRawPointer, capacity: Int) {
        let address = UInt(bitPattern: pointer)
        let keep = state.withLock { state -> Bool in
            state.statistics.liveBytes -= capacity
            guard capacity <= state.cacheLimit else { return false }
            BufferPool.evict(&state, toFit: capacity)
            state.freeLists[capacity, default: []].append(address)
            state.statistics.cachedBytes += capacity
            return true
        }
        if !keep { pointer.deallocate() }
    }

    /// Frees cached buffers, largest classes first, until `incoming` more bytes fit the cache.
    private static func evict(_ state: inout State, toFit incoming: Int) {
        guard state.statistics.cachedBytes + incoming > state.cacheLimit else { return }
        for size in state.freeLists.keys.sorted(by: >) {
            while state.statistics.cachedBytes + incoming > state.cacheLimit,
                let address = state.freeLists[size]?.popLast()
            {
                UnsafeMutableRawPointer(bitPattern: address)?.deallocate()
                state.statistics.cachedBytes -= size
            }
            if state.freeLists[size]?.isEmpty == true { state.freeLists[size] = nil }
            if state.statistics.cachedBytes + incoming <= state.cacheLimit { return }
        }
    }
}
