import TesseraTensor

/// Builds one operation's result tensors from its operand tensors (in the order the
/// operation's lowering asked for them) with the public `MLTensor` API. Parameters were
/// resolved at load and are captured.
///
/// Runs inside `MLTensor.withShapeChecks` (see ``LoweredFunction/run(_:)``), so a tensor
/// rule the operands break is reported, not trapped; throws ``OperandError`` for a MIL rule
/// the tensor operations do not have.
typealias LoweredCompute = @Sendable ([MLTensor]) throws -> [MLTensor]

/// One MIL operation after lowering: where its operands and results live in the run's value
/// table, and the closure that builds its graph nodes.
struct LoweredStep: Sendable {
    /// The MIL op type (`conv`, `linear`, …), for error messages.
    var type: String
    /// The operation's `name` attribute (or its first output's name).
    var name: String
    /// Value-table slots of the operands, in the order `compute` expects them.
    var operands: [Int]
    /// Value-table slots the results go to, one per MIL output.
    var results: [Int]
    /// For each result, the declared dimensions (`nil` where unknown), used to check the
    /// lowering's shapes against the file's; `nil` for results that are not tensors or not
    /// checked.
    var declaredShapes: [[Int?]?]
    /// Positions in ``operands`` whose elements are read while the graph is built (a reshape
    /// target or slice bound computed at run time), so the shapes that follow depend on them.
    var valueReads: [Int] = []
    /// How the operation treats a batch axis, decided at load (see ``BatchRule``).
    var batchRule: BatchRule
    /// The node builder.
    var compute: LoweredCompute
}
