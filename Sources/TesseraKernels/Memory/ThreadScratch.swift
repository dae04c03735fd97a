import CTesseraSIMD
import Foundation

/// Scratch memory that stays with the thread using it, for the bodies of parallel loops.
///
/// A loop body that takes its scratch block from ``BufferPool/shared`` gets whichever block was
/// released last, often the one the other core has just written; the first writes to each of
/// its cache lines then wait for that core to give the line up. Each thread here keeps its own
/// blocks (`TESSERA_THREAD_SCRATCH_SLOTS`, 64-byte aligned, grown to the largest request in
/// whole pages, freed when the thread exits), so the lines are already in its cache. Requests
/// above ``largestBytes``, nested requests beyond the slots, and every request when the
/// environment variable `TESSERA_THREAD_SCRATCH` is `0` (for A/B runs) take a pooled buffer
/// instead (``GEMMKernels/temporary(_:count:)``).
///
/// ```swift
/// parallelFor(count: groups, cost: cost) { range in
///     ThreadScratch.withFloats(count: group * positions) { scratch in
///         for index in range { /* write, then read, scratch[0 ..< group * positions] */ }
///     }
/// }
/// ```
package enum ThreadScratch {
    /// The largest block a thread keeps, in bytes: 4 MiB (the band blocks of
    /// ``DepthwiseBlock`` take about 512 KiB).
    package static let largestBytes = 4 << 20

    /// Whether requests take per-thread blocks: unless `TESSERA_THREAD_SCRATCH` is `0`.
    package static let isEnabled = ProcessInfo.processInfo.environment["TESSERA_THREAD_SCRATCH"] != "0"

    /// Runs `body` with at least `count` uninitialized floats (64-byte aligned) that no other
    /// thread uses until `body` returns; the pointer must not escape `body`.
    ///
    /// - Parameters:
    ///   - count: Floats needed; at least one is provided.
    ///   - body: Writes before it reads; may call `withFloats` again (a second slot, then the pool).
    package static func withFloats<Result>(
        count: Int, _ body: (UnsafeMutablePointer<Float>) throws -> Result
    ) rethrows -> Result {
        let bytes = Swift.max(1, count) * MemoryLayout<Float>.stride
        if isEnabled, bytes <= largestBytes, let block = tessera_thread_scratch_acquire(bytes) {
            defer { tessera_thread_scratch_release(block) }
            return try body(block.bindMemory(to: Float.self, capacity: bytes / MemoryLayout<Float>.stride))
        }
        let buffer = GEMMKernels.temporary(Float.self, count: Swift.max(1, count))
        return try withExtendedLifetime(buffer) { try body(buffer.typedPointer(Float.self)) }
    }
}
