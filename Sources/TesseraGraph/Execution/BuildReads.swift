import Foundation

/// Counts, on the calling thread, what makes a graph depend on values while it is built:
/// computing anything (a materialization), reading the elements of a watched node (a model's
/// input) to fold them or copy them to the host, or making a value on the host (random draws,
/// ranges).
///
/// A prediction whose graph was built without any of these depends on its inputs only
/// through the graph, so the graph's plan can run again on new inputs of the same shapes
/// without being built again (``GraphExecutor/replay(_:inputs:memoryLimit:onTaskThread:)``). A build that
/// counted anything may have folded a value into the graph's structure or constants, and is
/// never replayed. Reading a constant's elements (a weight, a literal) is not counted: the
/// same constant is there on every build.
///
/// ```swift
/// let (outputs, reads) = try BuildReads.counting(watching: inputNodes) { try function.run(inputs) }
/// ```
package enum BuildReads {
    /// One open scope: what it counted and which nodes it watches.
    private final class Scope {
        var reads = 0
        let watched: Set<ObjectIdentifier>
        init(watched: Set<ObjectIdentifier>) { self.watched = watched }
    }

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        let status = pthread_key_create(&key, nil)
        precondition(status == 0, "[BuildReads] pthread_key_create failed (\(status))")
        return key
    }()

    /// Runs `body` and returns its result with the reads counted on this thread meanwhile,
    /// `watching` nodes whose elements count when read (nested scopes count into the innermost).
    package static func counting<Result>(
        watching nodes: [Node], _ body: () throws -> Result
    ) rethrows -> (Result, reads: Int) {
        let scope = Scope(watched: Set(nodes.map(ObjectIdentifier.init)))
        let previous = pthread_getspecific(key)
        pthread_setspecific(key, Unmanaged.passUnretained(scope).toOpaque())
        defer { pthread_setspecific(key, previous) }
        let result = try withExtendedLifetime(scope) { try body() }
        return (result, scope.reads)
    }

    private static var current: Scope? {
        pthread_getspecific(key).map { Unmanaged<Scope>.fromOpaque($0).takeUnretainedValue() }
    }

    /// Counts one computation or host value, when a scope is open on this thread.
    @inline(__always)
    package static func note() {
        current?.reads += 1
    }

    /// Counts a read of `node`'s elements when an open scope on this thread watches it.
    @inline(__always)
    package static func note(reading node: Node) {
        guard let scope = current, scope.watched.contains(ObjectIdentifier(node)) else { return }
        scope.reads += 1
    }
}
