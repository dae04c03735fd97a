import Synchronization
import TesseraKernels

/// Where a broken shape or type rule goes: a trap, or — inside a checking scope — a record.
///
/// Outside any scope ``report(_:file:line:)`` traps with the rule's message, as Tessera's
/// tensor API promises. Inside ``withRecording(_:)`` (what `MLTensor.withShapeChecks` runs)
/// it keeps the first error and returns; the caller then returns a placeholder (see
/// ``Node/placeholder(shape:type:)``) so that the code building the graph runs on without
/// crashing, and the scope throws the recorded error when it ends.
///
/// The scope is a task-local value, so scopes in concurrent tasks do not see each other's
/// errors, and it is looked up only on the failure path: a rule that holds costs nothing more.
///
/// ```swift
/// let (result, error) = ShapeChecks.withRecording { buildGraph() }
/// if let error { throw error }
/// ```
package enum ShapeChecks {
    /// The first error reported inside one scope.
    package final class Recorder: Sendable {
        let firstError = Mutex<OpError?>(nil)
        init() {}
    }

    /// The innermost scope's recorder, or `nil` outside any scope.
    @TaskLocal static var recorder: Recorder?

    /// Whether the calling code runs inside a checking scope.
    package static var isRecording: Bool { recorder != nil }

    /// Reports a broken rule: traps with `error`'s message outside a scope; inside one,
    /// records it (if it is the scope's first) and returns.
    @inline(never)
    package static func report(_ error: OpError, file: StaticString = #fileID, line: UInt = #line) {
        guard let recorder else { kernelFailure(error.message, file: file, line: line) }
        recorder.firstError.withLock { first in
            if first == nil { first = error }
        }
    }

    /// Runs `body` in a new scope and returns its result with the first error reported inside
    /// it (`nil` when every rule held). An error `body` throws propagates unless a rule was
    /// broken first, which is then returned instead (the broken rule is the cause).
    package static func withRecording<Result>(_ body: () throws -> Result) rethrows -> (Result?, OpError?) {
        let scope = Recorder()
        do {
            let result = try $recorder.withValue(scope) { try body() }
            return (result, scope.firstError.withLock { $0 })
        } catch {
            if let first = scope.firstError.withLock({ $0 }) { return (nil, first) }
            throw error
        }
    }

    /// The asynchronous form of ``withRecording(_:)``: `body` and the tasks it starts report
    /// into one scope.
    package static func withRecording<Result>(
        isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> Result
    ) async rethrows -> (Result?, OpError?) {
        let scope = Recorder()
        do {
            let result = try await $recorder.withValue(scope) { try await body() }
            return (result, scope.firstError.withLock { $0 })
        } catch {
            if let first = scope.firstError.withLock({ $0 }) { return (nil, first) }
            throw error
        }
    }
}
