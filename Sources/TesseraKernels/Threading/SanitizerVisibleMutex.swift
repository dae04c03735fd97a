import Foundation

/// A mutex built on `pthread_mutex_t`, with the API of `Synchronization.Mutex` that Tessera
/// uses (`init(_:)`, `withLock(_:)`), for ThreadSanitizer builds.
///
/// `Synchronization.Mutex` waits on a futex on Linux, a system call ThreadSanitizer does not
/// model, so every access it guards is reported as a race. ThreadSanitizer intercepts the
/// pthread calls, so with this lock it sees the happens-before edges. Builds made by
/// `make tsan` define `TESSERA_TSAN`, and each module that locks then declares
/// `typealias Mutex = SanitizerVisibleMutex` (`Mutex+ThreadSanitizer.swift`), which shadows the
/// standard library's type; other builds keep `Synchronization.Mutex` and never use this one.
///
/// ```swift
/// let counter = SanitizerVisibleMutex(0)
/// counter.withLock { $0 += 1 }
/// ```
package final class SanitizerVisibleMutex<Value>: @unchecked Sendable {
    // `@unchecked`: `value` is read and written only while `mutex` is held.
    private var value: Value
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    /// Creates a mutex guarding `initialValue`.
    package init(_ initialValue: consuming sending Value) {
        value = initialValue
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with the guarded value while holding the lock.
    package func withLock<Result, E: Error>(_ body: (inout Value) throws(E) -> Result) throws(E) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
