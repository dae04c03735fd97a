import TesseraGraph
import TesseraKernels

/// Values a prediction makes on the host, element by element, before its graph runs: a
/// range's elements (MIL `range_1d`, NeuralNetwork `rangeStatic` / `rangeDynamic`), random
/// draws (the random ops and layers) and masks (NeuralNetwork band layers). The graph's plan
/// and its memory limit never see them, so their sizes, which a model or its inputs set, are
/// checked here: below ``LoweredFunction/maximumRangeCount`` elements, and within the model's
/// memory limit (``MLModelConfiguration/memoryLimit``) when it has one, in its predictions and
/// in its load (the lowering's constants and the load check's build on the declared shapes).
///
/// ```swift
/// try LoweredFunction.requireHostValue(count, "the range [0, 1e9) by 1")
/// ```
extension LoweredFunction {
    /// The memory limit, in bytes, of the model predicting or loading on this task
    /// (``MLModelConfiguration/memoryLimit``); `nil` outside a prediction or a load and for
    /// models without one.
    @TaskLocal static var predictionMemoryLimit: Int?

    /// Runs `body` (a prediction's graph building, a load's lowering or check) with `limit` as
    /// ``predictionMemoryLimit``; no task-local push when `limit` is `nil`.
    static func withPredictionMemoryLimit<Result>(_ limit: Int?, _ body: () throws -> Result) rethrows -> Result {
        guard let limit else { return try body() }
        return try $predictionMemoryLimit.withValue(limit, operation: body)
    }

    /// Throws ``OperandError`` naming `what` unless a value of `count` Float32 elements may be
    /// made on the host: `count` is below ``maximumRangeCount`` and its bytes fit the running
    /// prediction's memory limit (``predictionMemoryLimit``).
    static func requireHostValue(_ count: Int, _ what: @autoclosure () -> String) throws {
        // A value made on the host differs from one build to the next: such a graph is never replayed.
        BuildReads.note()
        try require(count < maximumRangeCount, "\(what()) has \(count) elements, more than \(maximumRangeCount)")
        guard let limit = predictionMemoryLimit else { return }
        let bytes = count * MemoryLayout<Float>.stride
        try require(
            bytes <= limit,
            "\(what()) needs \(MLModel.bytes(bytes)) made on the host, more than the model's memory limit of "
                + "\(MLModel.bytes(limit)) (MLModelConfiguration.memoryLimit); nothing was computed")
    }

    /// ``requireHostValue(_:_:)`` for a value of this shape; throws for a negative size or an
    /// element count that overflows.
    static func requireHostValue(shape: [Int], _ what: @autoclosure () -> String) throws {
        try require(shape.allSatisfy { $0 >= 0 }, "\(what()) \(shape) has a negative size")
        guard let count = shape.checkedElementCount else {
            throw OperandError("\(what()) \(shape) has more elements than Tessera allocates")
        }
        try requireHostValue(count, "\(what()) \(shape)")
    }
}
