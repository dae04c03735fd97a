/// A broken shape or type rule of an op: the inputs (shapes, scalar types, parameters) do not
/// fit it. The message names the op and the shapes, as a trap's does.
///
/// Shape rules throw it (a graph op's rule, the geometry of a convolution or a pool); the
/// public `MLTensor` API turns it into a trap with the same message, or, inside
/// `MLTensor.withShapeChecks`, into a thrown `MLTensorShapeError`.
///
/// ```swift
/// try OpError.require(a.count == b.count, "[add] shapes \(a) and \(b) differ")
/// ```
package struct OpError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong, e.g. `[matmul] inner dimensions differ: [2, 3] vs [4, 5]`.
    package let message: String

    /// An error with `message`.
    package init(_ message: String) { self.message = message }

    /// The message.
    package var description: String { message }

    /// Throws an error with `message` when `condition` is false; the message is built only then.
    @inlinable
    @inline(__always)
    package static func require(_ condition: Bool, _ message: @autoclosure () -> String) throws(OpError) {
        if !condition { throw OpError(message()) }
    }
}
