import TesseraKernels
import TesseraTensor

/// The load-time build check: a model that loads must not fail at prediction on the input
/// shapes its description declares.
///
/// Every shape rule of a lowered step depends on its operands' shapes only, except where a
/// step reads elements while building (a reshape target or slice bound computed at run time,
/// `non_zero`, the scatter indices). So building the graph once, at load, on inputs of the
/// declared shapes (filled with ones; nothing is computed except the small shape expressions
/// such reads need) finds every such failure, unless one of those reads takes values that
/// come from input data rather than from shapes. Then the shapes follow the data and the
/// check is left to the prediction.
extension LoweredFunction {
    /// Op types whose lowering reads an operand's elements while building, besides the
    /// run-time parameters ``LoweredStep/valueReads`` records: `cond` and `while_loop`
    /// materialize their predicates, the list ops their indices (and `make_list` its length
    /// and element sizes).
    static let elementReadingOperationTypes: Set<String> = [
        "non_zero", "scatter", "scatter_nd", "cond", "while_loop", "make_list", "list_read", "list_write",
        "list_gather", "list_scatter",
    ]

    /// Whether some step reads, while the graph is built, elements computed from input data
    /// (not only from input shapes), so that later shapes can depend on the input values.
    ///
    /// A value derives from data when it is an input or a state, or an op's result with an
    /// operand that does, except `shape`, whose result depends on its operand's shape only.
    package var shapesDependOnInputValues: Bool {
        var fromData = [Bool](repeating: false, count: slotCount)
        for slot in inputSlots { fromData[slot] = true }
        for step in steps {
            let reads =
                LoweredFunction.elementReadingOperationTypes.contains(step.type)
                ? Array(step.operands.indices) : step.valueReads
            if reads.contains(where: { fromData[step.operands[$0]] }) { return true }
            let derived = step.type != "shape" && step.operands.contains { fromData[$0] }
            for slot in step.results { fromData[slot] = derived }
        }
        return false
    }

    /// Builds the graph of one prediction on inputs of `shapes` whose elements are all 1,
    /// without computing it: the checks every prediction on these shapes makes, once.
    ///
    /// `shapes` maps input (and state) names to the shapes a caller gives them (a rank-0
    /// input as `[1]`, as Core ML gives it). Inputs missing from `shapes` or of a type Tessera
    /// does not compute in skip the check. Call it only when ``shapesDependOnInputValues``
    /// is `false`; otherwise a failure may belong to these particular values.
    ///
    /// ```swift
    /// try function.checkBuilds(inputShapes: ["x": [1, 3, 224, 224]])
    /// ```
    ///
    /// - Throws: ``LoweringError`` as ``run(_:)`` does: `.shapeMismatch` naming the operation
    ///   whose operands do not fit it, `.invalidInput` when a shape is not the program's.
    package func checkBuilds(inputShapes shapes: [String: [Int]]) throws {
        var inputs: [String: MLTensor] = [:]
        for input in self.inputs {
            var type = input.type
            if case .state(let wrapped) = type { type = wrapped }
            guard let shape = shapes[input.name], let tensorType = type.tensorType,
                let computeType = LoweredFunction.computeType(tensorType.dataType)
            else { return }
            // A broadcast scalar: nothing is allocated for the input itself.
            inputs[input.name] = MLTensor.scalarConstant(1, type: computeType).broadcast(to: shape)
        }
        _ = try evaluate(inputs)
    }
}
