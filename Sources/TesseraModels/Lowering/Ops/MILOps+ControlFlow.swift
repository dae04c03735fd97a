import TesseraTensor

/// Control flow: `cond` (one of two nested blocks, chosen by `pred`) and `while_loop`
/// (`loop_vars` through a condition block and a body block while the condition holds).
///
/// The blocks are lowered at load (``LoweredBlock``) into the function's slot numbering; the
/// op reads the values its blocks use from enclosing blocks as operands of its own. Which
/// branch runs, and how often a body runs, depends on the data, so the predicate is
/// materialized when the prediction is built (on the calling thread, as a slice bound
/// computed at run time is), and the chosen block's nodes are built after it; a loop
/// materializes its variables with each condition, so the graph does not grow with the
/// iteration count. A loop that runs more than ``maximumLoopIterations`` times fails the
/// prediction.
extension MILOp {
    /// The op types whose operations carry nested blocks that their lowering handles.
    static let blockOpTypes: Set<String> = ["cond", "while_loop"]

    /// The most iterations one `while_loop` runs before the prediction fails.
    static let maximumLoopIterations = 1 << 20

    static let controlFlowOps: [MILOp] = [
        // Data-dependent branching sees the whole batch: batches run as a loop.
        MILOp("cond", batch: .notSeparable, cost: .elementwise) { lowering in
            let pred = try lowering.tensor("pred")
            let blocks = lowering.operation.blocks
            guard blocks.count == 2 else { throw lowering.invalid("cond needs two blocks, has \(blocks.count)") }
            let branches = try blocks.map { try LoweredBlock($0, context: lowering.context) }
            let outputs = lowering.operation.outputs.count
            for branch in branches where branch.outputSlots.count != outputs {
                throw lowering.invalid("a branch returns \(branch.outputSlots.count) values for \(outputs) outputs")
            }
            let free = branches.map { branch in branch.freeSlots.map { lowering.appendOperand(slot: $0) } }
            return { args in
                let branch = try truth(args[pred]) ? 0 : 1
                return try branches[branch].run(inputs: [], free: free[branch].map { args[$0] })
            }
        },
        MILOp("while_loop", batch: .notSeparable, cost: .elementwise) { lowering in
            let initial = try lowering.tensors("loop_vars")
            let blocks = lowering.operation.blocks
            guard blocks.count == 2 else {
                throw lowering.invalid("while_loop needs a condition and a body block, has \(blocks.count)")
            }
            let (condition, body) = (
                try LoweredBlock(blocks[0], context: lowering.context),
                try LoweredBlock(blocks[1], context: lowering.context)
            )
            let count = initial.count
            guard condition.inputSlots.count == count, condition.outputSlots.count == 1,
                body.inputSlots.count == count, body.outputSlots.count == count,
                lowering.operation.outputs.count == count
            else {
                throw lowering.invalid(
                    "the blocks do not fit \(count) loop variables (condition \(condition.inputSlots.count) → "
                        + "\(condition.outputSlots.count), body \(body.inputSlots.count) → \(body.outputSlots.count))")
            }
            let conditionFree = condition.freeSlots.map { lowering.appendOperand(slot: $0) }
            let bodyFree = body.freeSlots.map { lowering.appendOperand(slot: $0) }
            return { args in
                var variables = initial.map { args[$0] }
                let (conditionValues, bodyValues) = (conditionFree.map { args[$0] }, bodyFree.map { args[$0] })
                for _ in 0..<maximumLoopIterations {
                    let holds = try condition.run(inputs: variables, free: conditionValues)[0]
                    MLTensor.materialize(variables + [holds])
                    if !(try truth(holds)) { return variables }
                    let next = try body.run(inputs: variables, free: bodyValues)
                    for (index, value) in next.enumerated() {
                        try require(
                            value.rank == variables[index].rank,
                            "loop variable \(index) changes rank from \(variables[index].shape) to \(value.shape)")
                    }
                    variables = next
                }
                throw OperandError("the loop ran \(maximumLoopIterations) times without its condition failing")
            }
        },
    ]

    /// The value of a one-element predicate (non-zero is true).
    static func truth(_ predicate: MLTensor) throws -> Bool {
        try require(predicate.scalarCount == 1, "the predicate has shape \(predicate.shape); it must be one value")
        if predicate.kernelType.isFloatingPoint { return predicate.asFloat.scalars(of: Float.self)[0] != 0 }
        return predicate.converted(to: .int32).scalars(of: Int32.self)[0] != 0
    }
}
