/// Checks a programmer-error condition and stops with `message` when it fails — in every
/// build configuration.
///
/// Swift's `precondition` drops its message in optimized builds, leaving only "Illegal
/// instruction"; Tessera promises that a trap names the op and the shapes, so kernels and the
/// layers above use this instead. The message is built only on failure.
///
/// ```swift
/// kernelPrecondition(a.count == b.count, "[add] shapes \(a) and \(b) differ")
/// ```
@inlinable
@inline(__always)
package func kernelPrecondition(
    _ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String,
    file: StaticString = #fileID, line: UInt = #line
) {
    if !condition() { kernelFailure(message(), file: file, line: line) }
}

/// Stops with `message` in every build configuration (see ``kernelPrecondition(_:_:file:line:)``).
@inline(never)
@usableFromInline
package func kernelFailure(_ message: String, file: StaticString = #fileID, line: UInt = #line) -> Never {
    fatalError(message, file: file, line: line)
}
