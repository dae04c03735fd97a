import COpenBLAS
import Dispatch
import Foundation
import Synchronization

/// How much work one item of a ``parallelFor(count:cost:_:)`` loop is, in nanoseconds on one
/// core. It decides whether a loop is worth splitting across threads and into how many chunks.
@usableFromInline package struct ParallelCost: Sendable, Hashable {
    /// Estimated nanoseconds per item.
    @usableFromInline package var nanosecondsPerItem: Double

    /// A cost of `nanoseconds` per item.
    package init(nanosecondsPerItem: Double) {
        self.nanosecondsPerItem = nanosecondsPerItem
    }

    /// One streaming element-wise operation (an add, a copy, a compare) per item.
    package static let elementwise = ParallelCost(nanosecondsPerItem: 0.4)
    /// One transcendental function (exp, log, tanh, erf) per item.
    package static let transcendental = ParallelCost(nanosecondsPerItem: 4)
    /// `nanoseconds` per item, for rows, blocks or images.
    package static func perItem(nanoseconds: Double) -> ParallelCost {
        ParallelCost(nanosecondsPerItem: nanoseconds)
    }
}

/// The number of threads the kernel layer uses, and OpenBLAS's thread count with it.
///
/// Both default to the number of active processors. Change them together through
/// ``setCoreBudget(_:)`` so Tessera's own loops and OpenBLAS never oversubscribe the machine.
@usableFromInline package enum KernelThreads {
    private static let budget = Atomic<Int>(0)
    /// Loops whose estimated total work is below this many nanoseconds run serially: splitting
    /// them costs more than it saves. `TESSERA_SERIAL_THRESHOLD_NS` overrides it (for tuning
    /// on a new machine).
    @usableFromInline package static let serialThresholdNanoseconds: Double =
        ProcessInfo.processInfo.environment["TESSERA_SERIAL_THRESHOLD_NS"].flatMap { Double($0) } ?? 30_000

    /// The number of threads a ``parallelFor(count:cost:_:)`` loop may use: the
    /// `TESSERA_NUM_THREADS` environment variable if set, else the active processor count.
    @usableFromInline package static var coreBudget: Int {
        let current = budget.load(ordering: .relaxed)
        if current > 0 { return current }
        // `TESSERA_NUM_THREADS` overrides the processor count (for example to leave cores to
        // other work, or to compare single-threaded runs).
        let requested = ProcessInfo.processInfo.environment["TESSERA_NUM_THREADS"].flatMap { Int($0) }
        let initial = Swift.max(1, requested ?? ProcessInfoShim.activeProcessorCount)
        setCoreBudget(initial)
        return initial
    }

    /// Sets the thread budget for Tessera's loops, matrix products included.
    ///
    /// OpenBLAS itself runs single-threaded (``OpenBLASLibrary``): `GEMMKernels` splits large
    /// products into blocks across this budget.
    ///
    /// - Precondition: `cores >= 1`.
    package static func setCoreBudget(_ cores: Int) {
        kernelPrecondition(cores >= 1, "[KernelThreads] core budget must be at least 1, got \(cores)")
        budget.store(cores, ordering: .relaxed)
    }

    /// The CPU core type OpenBLAS chose for its kernels (for example `Haswell`, `SkylakeX`, or
    /// `Prescott` when it did not recognise the CPU), as reported by `openblas_get_corename`.
    package static var blasCoreName: String { OpenBLASLibrary.shared.coreName }

    /// OpenBLAS's kernel family, thread count and how it was loaded, in one line (for example
    /// `SkylakeX, 1 thread, loaded by Tessera`; see ``OpenBLASLibrary/summary``).
    package static var blasSummary: String { OpenBLASLibrary.shared.summary }

    /// Runs `body` with every ``parallelFor(count:cost:alignment:_:)`` it reaches on this
    /// thread kept on this thread, as inside a parallel region.
    ///
    /// For callers that already run several independent jobs at once (the graph executor when
    /// another materialization is in flight): one job per core beats every job fighting for
    /// every core. Kernels partition their work by the core budget, not by the threads that
    /// happen to run it, so the results are the same bits either way.
    ///
    /// ```swift
    /// let sum = KernelThreads.withSerialLoops { computeSomething() }
    /// ```
    package static func withSerialLoops<Result>(_ body: () throws -> Result) rethrows -> Result {
        let previous = ParallelRegion.enter()
        defer { ParallelRegion.leave(restoring: previous) }
        return try body()
    }

    /// Runs `body` with every ``parallelFor(count:cost:alignment:_:)`` it reaches on this
    /// thread that finds the ``SpinningWorkers`` busy with another thread's loop kept on this
    /// thread, instead of handed to `DispatchQueue.concurrentPerform`.
    ///
    /// For work run on a thread of Swift's cooperative pool (an awaited materialization):
    /// waking Dispatch workers there would put a thread wake-up on the critical path and
    /// block the pool thread until they finish. Loops that get the workers still split
    /// across them, this thread taking part; the results are the same bits either way.
    ///
    /// ```swift
    /// let value = KernelThreads.withoutDispatchFallback { computeSomething() }
    /// ```
    package static func withoutDispatchFallback<Result>(_ body: () throws -> Result) rethrows -> Result {
        let previous = pthread_getspecific(DispatchFallback.key)
        pthread_setspecific(DispatchFallback.key, UnsafeRawPointer(bitPattern: 1))
        defer { pthread_setspecific(DispatchFallback.key, previous.map { UnsafeRawPointer($0) }) }
        return try body()
    }
}

/// Marks threads on which a `parallelFor` that finds the spinning workers busy runs serially
/// rather than on Dispatch (see ``KernelThreads/withoutDispatchFallback(_:)``).
@usableFromInline
enum DispatchFallback {
    @usableFromInline static let key: pthread_key_t = {
        var key = pthread_key_t()
        let status = pthread_key_create(&key, nil)
        kernelPrecondition(status == 0, "[parallelFor] pthread_key_create failed (\(status))")
        return key
    }()

    /// Whether loops on this thread may fall back to `DispatchQueue.concurrentPerform`.
    @usableFromInline static var isAllowed: Bool { pthread_getspecific(key) == nil }
}

/// Marks threads that are inside a parallel region, so a nested `parallelFor` runs serially.
@usableFromInline
enum ParallelRegion {
    @usableFromInline static let key: pthread_key_t = {
        var key = pthread_key_t()
        let status = pthread_key_create(&key, nil)
        kernelPrecondition(status == 0, "[parallelFor] pthread_key_create failed (\(status))")
        return key
    }()

    @usableFromInline static var isInside: Bool { pthread_getspecific(key) != nil }

    @usableFromInline static func enter() -> UnsafeMutableRawPointer? {
        let previous = pthread_getspecific(key)
        pthread_setspecific(key, UnsafeRawPointer(bitPattern: 1))
        return previous
    }

    @usableFromInline static func leave(restoring previous: UnsafeMutableRawPointer?) {
        pthread_setspecific(key, previous.map { UnsafeRawPointer($0) })
    }
}

/// Runs `body` over `0..<count` in contiguous chunks, in parallel when the work is large enough.
///
/// The loop stays on the calling thread when `count × cost` is below
/// ``KernelThreads/serialThresholdNanoseconds``, when the core budget is 1, or when it is
/// called from inside another `parallelFor` (regions never nest). Otherwise it splits the
/// range into about four chunks per core, a multiple of the core count (whole chunks, never
/// interleaved items), and runs them on ``SpinningWorkers`` (or, when those are busy with
/// another thread's loop or turned off, with `DispatchQueue.concurrentPerform`, except inside
/// ``KernelThreads/withoutDispatchFallback(_:)``, where such a loop runs on the calling thread);
/// the calling thread takes part. `body` must not block waiting for other work.
///
/// ```swift
/// parallelFor(count: n, cost: .elementwise) { range in
///     for i in range { out[i] = a[i] + b[i] }
/// }
/// ```
///
/// - Parameters:
///   - count: The number of items; nothing runs when it is 0 or less.
///   - cost: The estimated cost of one item.
///   - alignment: Chunk boundaries fall on multiples of this many items (for example 16
///     floats, one cache line), except the end of the last chunk.
///   - body: Called once per chunk with the chunk's items.
@inlinable
package func parallelFor(
    count: Int, cost: ParallelCost, alignment: Int = 1, _ body: (Range<Int>) -> Void
) {
    guard count > 0 else { return }
    let budget = KernelThreads.coreBudget
    let total = Double(count) * cost.nanosecondsPerItem
    if budget <= 1 || total < KernelThreads.serialThresholdNanoseconds || ParallelRegion.isInside {
        body(0..<count)
        return
    }
    // About four chunks per core balances uneven chunks without paying much dispatch; no
    // chunk is smaller than half the serial threshold's worth of work. More chunks than cores
    // come in a multiple of the core count: each participant's home run of chunks is then the
    // same size (five chunks on two cores were two and three: a 384-plane depthwise layer ran
    // 156 planes on one core and 228 on the other).
    let minimumItems = Swift.max(1, Int(KernelThreads.serialThresholdNanoseconds / 2 / cost.nanosecondsPerItem))
    var chunkCount = Swift.max(1, Swift.min(budget * 4, count / minimumItems))
    if chunkCount > budget { chunkCount -= chunkCount % budget }
    if chunkCount == 1 {
        body(0..<count)
        return
    }
    // Chunks of units of `alignment` items, spread evenly: their sizes differ by at most one
    // unit. (Chunks of one rounded-up size left the last short, and a participant's home run
    // with it: 36 items in 8 chunks were 5, 5, 5, 5 | 5, 5, 5, 1.)
    let align = Swift.max(1, alignment)
    let units = (count + align - 1) / align
    var chunks = Swift.min(chunkCount, units)
    if chunks > budget { chunks -= chunks % budget }
    if chunks <= 1 {
        body(0..<count)
        return
    }
    let bounds = EvenChunks(count: count, units: units, chunks: chunks, alignment: align)
    if let workers = SpinningWorkers.shared {
        let ran = workers.run(chunks: chunks) { chunk in body(bounds.range(chunk)) }
        if ran { return }
        // Busy with another thread's loop: on a cooperative-pool thread, stay here.
        if !DispatchFallback.isAllowed {
            body(0..<count)
            return
        }
    }
    withoutActuallyEscaping(body) { body in
        let box = UncheckedSendableBox(body)
        DispatchQueue.concurrentPerform(iterations: chunks) { chunk in
            let previous = ParallelRegion.enter()
            box.value(bounds.range(chunk))
            ParallelRegion.leave(restoring: previous)
        }
    }
}

/// The items of chunk `c` when `count` items, in units of `alignment`, are spread over
/// `chunks` chunks: units `[c · units / chunks, (c + 1) · units / chunks)`, the last chunk
/// ending at `count`.
@usableFromInline
struct EvenChunks: Sendable {
    @usableFromInline let count: Int
    @usableFromInline let units: Int
    @usableFromInline let chunks: Int
    @usableFromInline let alignment: Int

    @inlinable
    init(count: Int, units: Int, chunks: Int, alignment: Int) {
        self.count = count
        self.units = units
        self.chunks = chunks
        self.alignment = alignment
    }

    @inlinable
    func range(_ chunk: Int) -> Range<Int> {
        let start = chunk * units / chunks * alignment
        let end = Swift.min(count, (chunk + 1) * units / chunks * alignment)
        return start..<end
    }
}

/// Carries a value across a concurrency boundary whose safety the caller guarantees
/// (here: a loop body that only touches disjoint memory per chunk).
@usableFromInline
struct UncheckedSendableBox<Value>: @unchecked Sendable {
    @usableFromInline let value: Value
    @usableFromInline init(_ value: Value) { self.value = value }
}
