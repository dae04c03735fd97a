import TesseraTensor

/// A nested block lowered to steps: a block of a MIL control-flow op (`cond`'s branches,
/// `while_loop`'s condition and body) or a network of a NeuralNetwork control-flow layer
/// (`branch`'s two networks, `loop`'s condition and body).
///
/// A nested block shares its function's slot numbering (MIL names are unique in a program; a
/// NeuralNetwork's slots come from one builder); its steps read values defined outside it
/// (and constants) through ``freeSlots``, which the control-flow op registers as its own
/// operands. ``run(inputs:free:)`` builds the block's nodes on a value table of its own, so a
/// loop can run its body once per iteration.
///
/// A step may stop its block early by throwing a ``Signal`` (a NeuralNetwork `loopBreak` or
/// `loopContinue`, or a `branch` passing one on): ``runStopping(inputs:free:)`` then returns
/// each output's latest value so far (the last of its ``outputDefinitions`` that was
/// computed) with the signal, for the enclosing loop to act on.
struct LoweredBlock: Sendable {
    /// Why a step stopped its block: a loop's `break` or `continue`.
    struct Signal: Error, Sendable {
        /// What the enclosing loop does next.
        enum Kind: Sendable {
            /// Leave the loop.
            case breakLoop
            /// Start the next iteration.
            case continueLoop
        }
        /// The signal.
        let kind: Kind
        /// The results of the step that passes the signal on (a `branch` stopped inside its
        /// network: the blobs its network had written), `nil` for none.
        var results: [MLTensor]?
    }

    /// Slots of the block's inputs (a loop's variables), in order.
    let inputSlots: [Int]
    /// Slots of the values the block returns, in order.
    let outputSlots: [Int]
    /// For each output, every slot that holds a value of it in the order the block defines
    /// them (a NeuralNetwork blob that `copy` layers overwrite), the last being
    /// ``outputSlots``'s; `nil` when each output has one definition.
    let outputDefinitions: [[Int]]?
    /// Slots the block reads but does not define: values of enclosing blocks and constants.
    let freeSlots: [Int]
    /// The block's steps.
    let steps: [LoweredStep]
    /// The size of the value table the block needs.
    let slotCount: Int

    /// A block of steps lowered elsewhere (a NeuralNetwork control-flow layer's network).
    init(inputSlots: [Int], outputDefinitions: [[Int]], steps: [LoweredStep], slotCount: Int) {
        self.inputSlots = inputSlots
        self.outputSlots = outputDefinitions.map { $0.last! }
        self.outputDefinitions = outputDefinitions
        self.steps = steps
        self.slotCount = slotCount
        freeSlots = LoweredBlock.freeSlots(steps: steps, inputs: inputSlots, outputs: outputDefinitions.joined())
    }

    /// Lowers a nested block: defines its inputs, lowers its operations and finds its outputs.
    ///
    /// - Throws: ``ModelFormatError`` as ``LoweredFunction/init(package:functionName:)`` does,
    ///   and for an output the block never defines.
    init(_ block: MILBlock, context: LoweringContext) throws {
        inputSlots = block.inputs.map { context.define($0.name, type: $0.type) }
        (steps, _) = try LoweredBlock.steps(of: block.operations, outputs: block.outputs, context: context)
        outputSlots = try block.outputs.map { output in
            guard let slot = try context.slot(for: output) else {
                throw ModelFormatError(
                    .invalidSpecification, file: context.file, "a nested block's output '\(output)' is never defined")
            }
            return slot
        }
        outputDefinitions = nil
        freeSlots = LoweredBlock.freeSlots(steps: steps, inputs: inputSlots, outputs: outputSlots)
        slotCount = context.slotCount
    }

    /// The slots `steps` and `outputs` read that neither `inputs` nor a step defines, in
    /// order of first use.
    static func freeSlots(steps: [LoweredStep], inputs: [Int], outputs: some Sequence<Int>) -> [Int] {
        var defined = Set(inputs)
        var free: [Int] = []
        func use(_ slot: Int) {
            if !defined.contains(slot) && !free.contains(slot) { free.append(slot) }
        }
        for step in steps {
            step.operands.forEach(use)
            defined.formUnion(step.results)
        }
        outputs.forEach(use)
        return free
    }

    /// Builds the block's results from its inputs and the values of ``freeSlots`` (in that
    /// order).
    ///
    /// - Throws: what a step throws (a broken shape rule, ``OperandError``); a ``Signal``
    ///   no enclosing loop takes as an ``OperandError``.
    func run(inputs: [MLTensor], free: [MLTensor]) throws -> [MLTensor] {
        let (outputs, signal) = try runStopping(inputs: inputs, free: free)
        if signal != nil { throw OperandError("a loopBreak or loopContinue ran outside a loop body") }
        return outputs
    }

    /// Builds the block's results as ``run(inputs:free:)`` does, but stops at a step that
    /// throws a ``Signal`` and returns it with each output's latest value so far.
    ///
    /// - Throws: what a step throws other than a signal; ``OperandError`` when the block
    ///   stops before an output has any value.
    func runStopping(inputs: [MLTensor], free: [MLTensor]) throws -> (outputs: [MLTensor], signal: Signal?) {
        var values = [MLTensor?](repeating: nil, count: slotCount)
        for (slot, value) in zip(freeSlots, free) { values[slot] = value }
        for (slot, value) in zip(inputSlots, inputs) { values[slot] = value }
        for step in steps {
            let results: [MLTensor]
            do {
                results = try step.compute(step.operands.map { values[$0]! })
            } catch let signal as Signal {
                for (slot, result) in zip(step.results, signal.results ?? []) { values[slot] = result }
                return (try latestOutputs(values, stoppedBy: step.name), Signal(kind: signal.kind))
            }
            try require(
                results.count == step.results.count,
                "operation '\(step.name)' (op type '\(step.type)') produced \(results.count) values "
                    + "for \(step.results.count) outputs")
            for (slot, result) in zip(step.results, results) { values[slot] = result }
        }
        return (outputSlots.map { values[$0]! }, nil)
    }

    /// Each output's last computed definition, for a block that `step` stopped.
    private func latestOutputs(_ values: [MLTensor?], stoppedBy step: String) throws -> [MLTensor] {
        let definitions = outputDefinitions ?? outputSlots.map { [$0] }
        return try definitions.enumerated().map { index, slots in
            guard let value = slots.reversed().lazy.compactMap({ values[$0] }).first else {
                throw OperandError("'\(step)' stopped the block before its output \(index) had a value")
            }
            return value
        }
    }

    /// Lowers `operations` in order into steps (ops resolved at load leave none), defining
    /// their results in `context`; also returns the `classify` op's lowering, if any. A
    /// hand-written attention (``AttentionChain``) becomes one step; `outputs` are the block's
    /// outputs, which are never fused away.
    ///
    /// - Throws: ``ModelFormatError`` naming an unsupported op, or what its lowering throws.
    static func steps(of operations: [MILOperation], outputs: [String], context: LoweringContext) throws -> (
        [LoweredStep], LoweredClassifier?
    ) {
        var steps: [LoweredStep] = []
        var classifier: LoweredClassifier?
        var fused: [Int: AttentionChain] = [:]
        for chain in AttentionChain.find(in: operations, outputs: outputs, context: context) {
            for position in chain.positions { fused[position] = chain }
        }
        for (position, operation) in operations.enumerated() {
            if let chain = fused[position] {
                if position == chain.positions.last { steps.append(try chain.step(context: context)) }
                continue
            }
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
            case .atLoad(let resolve, let buildsTensors):
                if buildsTensors {
                    try lowering.checkingShapes { try resolve($0) }
                } else {
                    try resolve(lowering)
                }
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
