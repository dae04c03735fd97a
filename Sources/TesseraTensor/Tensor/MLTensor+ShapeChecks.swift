import TesseraGraph
import TesseraKernels

/// **Tessera extension.** A broken shape or type rule of an `MLTensor` operation, thrown by
/// ``MLTensor/withShapeChecks(_:)`` instead of the trap the operation makes outside it.
///
/// The message is the trap's: it names the operation and the shapes.
///
/// ```swift
/// do {
///     _ = try MLTensor.withShapeChecks { a.matmul(b) }
/// } catch let error as MLTensorShapeError {
///     print(error)   // [matmul] inner dimensions differ: [2, 3] vs [4, 5]
/// }
/// ```
public struct MLTensorShapeError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong, e.g. `[matmul] inner dimensions differ: [2, 3] vs [4, 5]`.
    public let message: String

    /// An error with `message`.
    public init(message: String) { self.message = message }

    /// The message.
    public var description: String { message }
}

extension MLTensor {
    /// **Tessera extension.** Runs `body`; the first shape or type rule that an `MLTensor`
    /// operation inside it breaks is thrown as ``MLTensorShapeError`` when `body` ends, instead
    /// of trapping. Use it to build tensors from untrusted input, such as a model file.
    ///
    /// Inside the scope an operation whose rule fails records the message (the first one
    /// counts) and returns a placeholder: a tensor of zeros, usually shaped like its first
    /// operand. Code after the failure runs on without crashing — later operations on
    /// placeholders check their rules too (their failures are not reported), and
    /// materializing a placeholder is safe — but its results are meaningless: when anything
    /// was recorded, the result of `body` is discarded and the error thrown. An error that
    /// `body` throws itself propagates unchanged, unless a rule was broken before it.
    ///
    /// Scopes nest (the innermost scope gets the error) and belong to the task that runs them:
    /// scopes in concurrent tasks do not see each other's errors. Outside any scope the
    /// operations trap as documented. Checking costs nothing until a rule fails. Only rules
    /// about shapes, scalar types and parameters are covered; a failure that depends on the
    /// elements (an out-of-range gather index) still traps when the tensor is computed.
    ///
    /// ```swift
    /// let y = try MLTensor.withShapeChecks {
    ///     x.reshaped(to: shapeFromTheModel).softmax(alongAxis: axisFromTheModel)
    /// }
    /// ```
    ///
    /// - Throws: ``MLTensorShapeError`` for the first broken rule, or what `body` throws.
    public static func withShapeChecks<Result>(_ body: () throws -> Result) throws -> Result {
        let (result, error) = try ShapeChecks.withRecording(body)
        if let error { throw MLTensorShapeError(message: error.message) }
        return result!
    }

    /// **Tessera extension.** The asynchronous form of ``withShapeChecks(_:)``: `body` may
    /// await (for example to materialize a result), and the child tasks it starts report into
    /// the same scope.
    ///
    /// ```swift
    /// let values = try await MLTensor.withShapeChecks {
    ///     await (a + b).shapedArray(of: Float.self)
    /// }
    /// ```
    ///
    /// - Throws: ``MLTensorShapeError`` for the first broken rule, or what `body` throws.
    public static func withShapeChecks<Result>(
        isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> Result
    ) async throws -> Result {
        let (result, error) = try await ShapeChecks.withRecording(body)
        if let error { throw MLTensorShapeError(message: error.message) }
        return result!
    }

    /// Whether `condition` holds. When it does not, traps with `message` — or, inside
    /// ``withShapeChecks(_:)``, records it and returns `false`, and the caller returns a
    /// ``placeholder(shape:type:)``. The message is built only on failure.
    ///
    /// ```swift
    /// guard MLTensor.check(rank >= 2, "[bandPart] needs rank ≥ 2, got shape \(shape)") else { return placeholder }
    /// ```
    @inline(__always)
    package static func check(
        _ condition: Bool, _ message: @autoclosure () -> String, file: StaticString = #fileID, line: UInt = #line
    ) -> Bool {
        if _fastPath(condition) { return true }
        ShapeChecks.report(OpError(message()), file: file, line: line)
        return false
    }

    /// A materialized tensor of zeros of `shape` (negative sizes read as 0) and `type`, which
    /// an operation returns inside ``withShapeChecks(_:)`` when its rule fails (see
    /// `Node.placeholder(shape:type:)`).
    package static func placeholder(shape: [Int] = [], type: KernelScalarType = .float32) -> MLTensor {
        MLTensor(node: Node.placeholder(shape: shape, type: type))
    }

    /// A placeholder of this tensor's shape and scalar type (see ``placeholder(shape:type:)``).
    package var placeholder: MLTensor { MLTensor.placeholder(shape: shape, type: kernelType) }
}
