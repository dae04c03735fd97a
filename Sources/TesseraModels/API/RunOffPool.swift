import Foundation
import Synchronization

/// Runs `body` on a Dispatch worker, so blocking work (reading and lowering a model, compiling
/// it, a stateful step) never occupies a thread of Swift's cooperative pool, and returns its
/// result to the calling task.
///
/// The result goes from the worker to the task under a lock as well as through the
/// continuation. When the worker resumes the continuation before the task has suspended, the
/// task carries on after reading an atomic inside the Swift runtime that ThreadSanitizer does
/// not see, so everything the worker wrote (a model it loaded) looked unsynchronized to it. In
/// `make tsan` builds the lock is a pthread mutex it sees (`Mutex+ThreadSanitizer.swift`); in
/// others it is one uncontended lock.
func runOffPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    let handoff = OffPoolHandoff<T>()
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        DispatchQueue.global(qos: .userInitiated).async {
            handoff.put(Result { try body() })
            continuation.resume()
        }
    }
    return try handoff.take().get()
}

/// The result ``runOffPool(_:)`` hands from its worker to the waiting task, under a lock.
private final class OffPoolHandoff<T: Sendable>: @unchecked Sendable {
    private let lock = Mutex<Void>(())
    /// Written once by the worker, read once by the task, each under ``lock``.
    private var result: Result<T, any Error>?

    func put(_ result: Result<T, any Error>) {
        lock.withLock { _ in self.result = result }
    }

    func take() -> Result<T, any Error> {
        lock.withLock { _ in self.result! }
    }
}
