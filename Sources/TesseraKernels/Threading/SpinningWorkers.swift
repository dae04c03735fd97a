import CTesseraSIMD
import Foundation
import Synchronization

/// Worker threads that stay awake briefly between parallel loops, so the next loop starts in
/// about a microsecond instead of waiting for sleeping threads to be woken.
///
/// A materialization runs several short parallel steps back to back (a reduction, a fused
/// program, a softmax — each 20–200 µs); waking Dispatch's sleeping workers for each can cost
/// as much as the step. These workers poll for the next loop for ``spinDuration`` after their
/// last chunk (as OpenMP runtimes do), then sleep on a condition variable. One loop runs at a
/// time: a caller that finds the workers busy with another thread's loop falls back to
/// `DispatchQueue.concurrentPerform`. `TESSERA_SPINNING_WORKERS=0` turns them off.
///
/// The protocol is one atomic word, `generation << 20 | inside`: an odd generation is a loop
/// open for workers, `inside` counts the workers in it. A worker joins with a compare-and-swap
/// that fails once the generation moved on; the caller closes its loop by moving an odd
/// generation to the next even one with a compare-and-swap that succeeds only when no worker
/// is inside, so the loop's closure is never read after `run` returns.
@usableFromInline
final class SpinningWorkers: @unchecked Sendable {
    /// The shared workers: one fewer than the core budget (the caller works too), or `nil`
    /// when turned off or when there is one core.
    @usableFromInline
    static let shared: SpinningWorkers? = {
        if ProcessInfo.processInfo.environment["TESSERA_SPINNING_WORKERS"] == "0" { return nil }
        let workers = KernelThreads.coreBudget - 1
        return workers >= 1 ? SpinningWorkers(workers: workers) : nil
    }()

    /// How long an idle worker keeps polling for the next loop before it sleeps.
    static let spinDuration: UInt64 = 200_000  // nanoseconds

    private static let insideBits = 20
    private static let insideMask = (1 << insideBits) - 1

    private let owner = Mutex<Bool>(false)
    private let state = Atomic<Int>(0)
    private let nextChunk = Atomic<Int>(0)
    /// For a loop of at most 64 chunks, bit `c` is set once chunk `c` is claimed (see
    /// ``runChunks(_:participant:)``).
    private let claimed = Atomic<UInt64>(0)
    /// The caller and the workers: chunk `c`'s home is participant `c * participants / chunks`.
    private let participants: Int
    private let remaining = Atomic<Int>(0)
    private let sleepers = Atomic<Int>(0)
    private let condition = NSCondition()
    /// The open loop's body and size: written by its caller before the generation is opened,
    /// read only by workers that joined it.
    private var body: ((Int) -> Void)?
    private var chunkCount = 0
    /// When the last timed loop was opened (`DispatchTime` nanoseconds), for
    /// ``handoffNanoseconds``.
    private let openedAt = Atomic<UInt64>(0)
    /// The first worker's ``HandoffLatency`` estimate in nanoseconds; 0 before it has one.
    private let handoff = Atomic<Int>(0)

    private init(workers: Int) {
        participants = workers + 1
        for index in 0..<workers {
            let thread = Thread { [self] in self.work(participant: index + 1) }
            thread.name = "tessera-worker-\(index)"
            thread.stackSize = 1 << 20
            thread.start()
        }
    }

    /// How long a loop takes to reach the first worker while it polls (``HandoffLatency``), in
    /// nanoseconds, or `nil` until it has seen a few loops.
    package var handoffNanoseconds: Int? {
        let estimate = handoff.load(ordering: .relaxed)
        return estimate > 0 ? estimate : nil
    }

    /// Runs `body(chunk)` once for every chunk in `0..<chunks`, on the workers and the calling
    /// thread; returns `false` at once, running nothing, when another loop holds the workers.
    @usableFromInline
    func run(chunks: Int, _ body: (Int) -> Void) -> Bool {
        let acquired = owner.withLock { busy -> Bool in
            if busy { return false }
            busy = true
            return true
        }
        guard acquired else { return false }
        defer { owner.withLock { $0 = false } }
        withoutActuallyEscaping(body) { body in
            self.body = body
            chunkCount = chunks
            nextChunk.store(0, ordering: .sequentiallyConsistent)
            claimed.store(0, ordering: .sequentiallyConsistent)
            remaining.store(chunks, ordering: .sequentiallyConsistent)
            // Open the loop: the next odd generation, nobody inside.
            let closed = state.load(ordering: .sequentiallyConsistent) >> SpinningWorkers.insideBits
            let open = closed + 1
            if SpinningWorkers.isTimed(open) {
                openedAt.store(DispatchTime.now().uptimeNanoseconds, ordering: .relaxed)
            }
            state.store(open << SpinningWorkers.insideBits, ordering: .sequentiallyConsistent)
            if sleepers.load(ordering: .sequentiallyConsistent) > 0 {
                condition.lock()
                condition.broadcast()
                condition.unlock()
            }
            runChunks(body, participant: 0)
            while remaining.load(ordering: .sequentiallyConsistent) > 0 { tessera_spin_pause() }
            // Close it once no worker is inside; late workers then see an even generation.
            let inside = open << SpinningWorkers.insideBits
            while !state.compareExchange(
                expected: inside, desired: (open + 1) << SpinningWorkers.insideBits,
                ordering: .sequentiallyConsistent
            ).exchanged {
                tessera_spin_pause()
            }
            self.body = nil
        }
        return true
    }

    /// Runs unclaimed chunks until none is left.
    ///
    /// A loop of at most 64 chunks gives every participant a home: a contiguous run of
    /// chunks, the same run in every loop of the same size. A participant runs its home
    /// chunks front to back, then takes other participants' unclaimed chunks from the back.
    /// Consecutive steps over the same tensor (the passes of a layer norm) then find each
    /// thread's part of it in that core's own cache, instead of wherever the last loop's race
    /// for chunks left it. Each chunk still runs exactly once: claiming is one atomic
    /// bit-set. Larger loops take chunks in order from one counter.
    private func runChunks(_ body: (Int) -> Void, participant: Int) {
        let chunks = chunkCount
        guard chunks <= 64 else {
            while true {
                let chunk = nextChunk.add(1, ordering: .sequentiallyConsistent).oldValue
                if chunk >= chunks { return }
                run(chunk, body)
            }
        }
        let homeStart = participant * chunks / participants
        let homeEnd = (participant + 1) * chunks / participants
        for chunk in homeStart..<homeEnd where claim(chunk) { run(chunk, body) }
        for chunk in (0..<chunks).reversed() where chunk < homeStart || chunk >= homeEnd {
            if claimed.load(ordering: .relaxed) & (1 << UInt64(chunk)) == 0 && claim(chunk) { run(chunk, body) }
        }
    }

    /// Whether this thread claimed `chunk` (no other thread had).
    private func claim(_ chunk: Int) -> Bool {
        let bit: UInt64 = 1 << UInt64(chunk)
        return claimed.bitwiseOr(bit, ordering: .sequentiallyConsistent).oldValue & bit == 0
    }

    /// Runs one claimed chunk as a parallel region and counts it done.
    private func run(_ chunk: Int, _ body: (Int) -> Void) {
        let previous = ParallelRegion.enter()
        body(chunk)
        ParallelRegion.leave(restoring: previous)
        remaining.subtract(1, ordering: .sequentiallyConsistent)
    }

    /// Runs chunks of the loop this worker joined. A function of its own, so the worker's
    /// reference to the body is released before it leaves the loop.
    @inline(never)
    private func runJoinedLoop(participant: Int) {
        guard let body else { return }
        runChunks(body, participant: participant)
    }

    /// Tries to join the open loop of `generation`; `true` when this worker is now inside it.
    private func join(_ generation: Int) -> Bool {
        var current = state.load(ordering: .sequentiallyConsistent)
        while current >> SpinningWorkers.insideBits == generation {
            let (exchanged, original) = state.compareExchange(
                expected: current, desired: current + 1, ordering: .sequentiallyConsistent)
            if exchanged { return true }
            current = original
        }
        return false
    }

    private func work(participant: Int) {
        var done = 0  // the last generation this worker took part in (or skipped)
        var latency = HandoffLatency()
        while true {
            let (generation, handoffSample) = waitForLoop(after: done, timed: participant == 1)
            done = generation
            if let handoffSample {
                latency.add(nanoseconds: handoffSample)
                if let estimate = latency.estimate { handoff.store(Swift.max(1, estimate), ordering: .relaxed) }
            }
            guard join(generation) else { continue }
            runJoinedLoop(participant: participant)
            state.subtract(1, ordering: .sequentiallyConsistent)
        }
    }

    /// Whether the loop of odd generation `generation` is timed for ``handoffNanoseconds``: one
    /// loop in four, so most loops read no clock (two reads a loop made short workloads of
    /// many loops, T8's 46 µs, about 0.5 % slower).
    private static func isTimed(_ generation: Int) -> Bool { generation & 7 == 1 }

    /// Polls, then sleeps, until an open (odd) generation newer than `done` appears. With
    /// `timed`, also returns how long after its opening the loop was seen, if this worker was
    /// already polling then (not asleep, not arriving late).
    private func waitForLoop(after done: Int, timed: Bool) -> (generation: Int, handoff: Int?) {
        func openGeneration() -> Int? {
            let generation = state.load(ordering: .sequentiallyConsistent) >> SpinningWorkers.insideBits
            return generation > done && generation & 1 == 1 ? generation : nil
        }
        let deadline = DispatchTime.now().uptimeNanoseconds + SpinningWorkers.spinDuration
        var polled = false
        while DispatchTime.now().uptimeNanoseconds < deadline {
            for _ in 0..<32 {
                if let generation = openGeneration() {
                    guard timed && polled && SpinningWorkers.isTimed(generation) else { return (generation, nil) }
                    let opened = openedAt.load(ordering: .sequentiallyConsistent)
                    let seen = DispatchTime.now().uptimeNanoseconds
                    // `openedAt` is this loop's while the loop is still open: the caller writes
                    // the next loop's only after closing this one.
                    let current = state.load(ordering: .sequentiallyConsistent) >> SpinningWorkers.insideBits
                    return (generation, current == generation ? Int(seen) - Int(opened) : nil)
                }
                polled = true
                tessera_spin_pause()
            }
        }
        condition.lock()
        defer { condition.unlock() }
        sleepers.add(1, ordering: .sequentiallyConsistent)
        defer { sleepers.subtract(1, ordering: .sequentiallyConsistent) }
        while true {
            if let generation = openGeneration() { return (generation, nil) }
            condition.wait()
        }
    }
}
