import TesseraTensor

/// A MIL block lowered to steps: a function's body, or a block nested in a control-flow op
/// (`cond`'s branches, `while_loop`'s condition and body).
///
/// A nested block shares its function's ``LoweringContext``, so its values get slots in the
/// same numbering (MIL names are unique in a program); its steps read values defined outside
/// it (and constants) through ``freeSlots``, which the control-flow op registers as its own
/// operands. ``run(inputs:free:)`` builds the block's nodes on a value table of its own, so a
/// `while_loop` can run its body once per iteration.
struct LoweredBlock: Sendable {
    /// Slots of the block's inputs (a loop's variables), in order.
    let inputSlots: [Int]
    /// Slots of the values the block returns, in order.
    let outputSlots: [Int]
    /// Slots the block reads but does not define: values of enclosing blocks and constants.
    let freeSlots: [Int]
    /// The block's steps.
    let steps: [LoweredStep]
    /// The size of the value table the block needs.
    let slotCount: Int

    /// Lowers a nested block: defines its inputs, lowers its operations and finds its outputs.
    ///
    /// - Throws: ``ModelFormatError`` as ``LoweredFunction/init(package:functionName:)`` does,
    ///   and for an output the block never defines.
    init(_ block: MILBlock, context: LoweringContext) throws {
        inputSlots = block.inputs.map { context.define($0.name, type: $0.type) }
        (steps, _) = try LoweredBlock.steps(of: block.operations, context: context)
        outputSlots = try block.outputs.map { output in
            guard let slot = try context.slot(for: output) else {
                throw ModelFormatError(
                    .invalidSpecification, file: context.file, "a nested block's output '\(output)' is never defined")
            }
            return slot
        }
        var defined = Set(inputSlots)
        var free: [Int] = []
        func use(_ slot: Int) {
            if !defined.contains(slot) && !free.contains(slot) { free.append(slot) }
        }
        for step in steps {
            step.operands.forEach(use)
            defined.formUnion(step.results)
        }
        outputSlots.forEach(use)
        freeSlots = free
        slotCount = context.slotCount
    }

    /// Builds the block's results from its inputs and the values of ``freeSlots`` (in that
    /// order).
    ///
    /// - Throws: what a step throws (a broken shape rule, ``OperandError``).
    func run(inputs: [MLTensor], free: [MLTensor]) throws -> [MLTensor] {
        var values = [MLTensor?](repeating: nil, count: slotCount)
        for (slot, value) in zip(freeSlots, free) { values[slot] = value }
        for (slot, value) in zip(inputSlots, inputs) { values[slot] = value }
        for step in steps {
            let results = try step.compute(step.operands.map { values[$0]! })
            try require(
                results.count == step.results.count,
                "operation '\(step.name)' (op type '\(step.type)') produced \(results.count) values "
                    + "for \(step.results.count) outputs")
            for (slot, result) in zip(step.results, results) { values[slot] = result }
        }
        return outputSlots.map { values[$0]! }
    }

    /// Lowers `operations` in order into steps (ops resolved at load leave none), defining
    /// their results in `context`; also returns the `classify` op's lowering, if any.
    ///
    /// - Throws: ``ModelFormatError`` naming an unsupported op, or what its lowering throws.
    static func steps(of operations: [MILOperation], context: LoweringContext) throws -> (
        [LoweredStep], LoweredClassifier?
    ) {
        var steps: [LoweredStep] = []
        var classifier: LoweredClassifier?
        for operation in operations {
            let name = operation.name ?? operation.outputs.first?.name ?? "?"
            guard let op = MILOpRegistry.op(named: operation.type),
                operation.blocks.isEmpty || MILOp.blockOpTypes.contains(operation.type)
            else {
                throw ModelFormatError(
                    .unsupportedModelType, file: context.file,
                    "operation '\(name)' (op type '\(operation.type)') is not supported by Tessera")
            }
            var lowering = OperationLowering(operation: operation, context: context)
            switch op.lowering {
            case .atLoad(let resolve):
                try lowering.checkingShapes { try resolve($0) }
            case .step(let handler, let batch):
                let compute = context.float16Rounding.wrapping(
                    try lowering.checkingShapes { try handler(&$0) }, outputs: operation.outputs)
                if let lowered = lowering.classifier { classifier = lowered }
                let results = operation.outputs.map { context.define($0.name, type: $0.type) }
                if let state = lowering.updatedState, let result = results.first {
                    context.writeState(state, slot: result)
                }
                let declaredShapes = operation.outputs.map {
                    lowering.checksDeclaredShapes ? LoweredFunction.checkableShape($0.type) : nil
                }
                steps.append(
                    LoweredStep(
                        type: operation.type, name: name, operands: lowering.operands, results: results,
                        declaredShapes: declaredShapes, valueReads: lowering.valueReads,
                        batchRule: batch.rule(for: lowering), compute: compute))
            }
        }
        return (steps, classifier)
    }
}
