import TesseraTensor

/// A hand-written attention in a MIL program — `matmul(q, k, transpose_y: true)`, a `mul` by
/// (or `real_div` by) a constant scalar, an optional `add` of a mask, `softmax` along the last
/// axis and `matmul(·, v)` — found at load and lowered as one step on
/// `MLTensor.scaledDotProductAttention`, whose float32 form is one fused kernel
/// (`GraphOp.attention`: the scores are never stored). This is what coremltools makes of
/// `softmax(q @ k.transpose(-1, -2) * scale + mask) @ v` in PyTorch.
///
/// Each intermediate value must have exactly one use (the next op of the chain) and must not be
/// an output of the block; with fp16 rounding on (``Float16Rounding/roundedToFloat16``) nothing
/// is fused, since the chain's intermediates would each be rounded.
struct AttentionChain {
    /// Positions (in the block's operations) of the ops the fused step replaces, the last
    /// being the value product, where the step goes.
    let positions: [Int]
    /// The factor on the scores.
    let scale: Float
    /// The synthetic `scaled_dot_product_attention` operation: `query`, `key`, `value` and
    /// optionally `attn_mask` bound as in the chain, the value product's outputs and name.
    let operation: MILOperation

    /// Every chain in `operations` whose intermediates nothing else reads (`outputs`: the
    /// block's outputs; uses inside nested blocks count).
    static func find(in operations: [MILOperation], outputs: [String], context: LoweringContext) -> [AttentionChain] {
        // A chain starts at a matmul: a block without one (a CNN's) skips the use counts.
        guard context.float16Rounding == .none, operations.contains(where: { $0.type == "matmul" }) else { return [] }
        var uses: [String: Int] = [:]
        func count(_ operations: [MILOperation]) {
            for operation in operations {
                for argument in operation.inputs.values {
                    for case .name(let name) in argument.bindings { uses[name, default: 0] += 1 }
                }
                for block in operation.blocks {
                    count(block.operations)
                    for output in block.outputs { uses[output, default: 0] += 1 }
                }
            }
        }
        count(operations)
        for output in outputs { uses[output, default: 0] += 1 }
        /// The one operation reading `name` (its only use), with its position.
        func soleConsumer(of operation: MILOperation) -> (Int, MILOperation)? {
            guard operation.outputs.count == 1, let name = operation.outputs.first?.name, uses[name] == 1 else {
                return nil
            }
            for (index, candidate) in operations.enumerated() where candidate.blocks.isEmpty {
                for argument in candidate.inputs.values where argument.bindings.contains(.name(name)) {
                    return (index, candidate)
                }
            }
            return nil
        }
        // The block's `const` ops are resolved while it is lowered, after this search: read
        // their values here.
        var constantOps: [String: MILValue] = [:]
        for operation in operations where operation.type == "const" {
            if let name = operation.outputs.first?.name, let value = operation.attributes["val"] {
                constantOps[name] = value
            }
        }
        func constantScalar(_ binding: MILBinding) -> Double? {
            if case .name(let name) = binding, context.constants[name] == nil, let value = constantOps[name] {
                return AttentionChain.constantScalar(.value(value), context)
            }
            return AttentionChain.constantScalar(binding, context)
        }
        func flag(_ operation: MILOperation, _ parameter: String) -> Bool? {
            guard let binding = operation.inputs[parameter]?.bindings.first else { return false }
            return constantScalar(binding).map { $0 != 0 }
        }
        func name(_ binding: MILBinding?) -> String? {
            if case .name(let value)? = binding { return value }
            return nil
        }

        var chains: [AttentionChain] = []
        for (first, scores) in operations.enumerated() where scores.type == "matmul" {
            guard flag(scores, "transpose_x") == false, flag(scores, "transpose_y") == true,
                let query = scores.inputs["x"]?.bindings.first, let key = scores.inputs["y"]?.bindings.first,
                let (scaleAt, scaling) = soleConsumer(of: scores),
                let scoresName = scores.outputs.first?.name
            else { continue }
            // The scale: mul by a constant scalar (either side) or real_div by one.
            var factor: Double?
            if scaling.type == "mul" {
                let (x, y) = (scaling.inputs["x"]?.bindings.first, scaling.inputs["y"]?.bindings.first)
                if name(x) == scoresName, let y { factor = constantScalar(y) }
                if name(y) == scoresName, let x { factor = constantScalar(x) }
            } else if scaling.type == "real_div", name(scaling.inputs["x"]?.bindings.first) == scoresName,
                let y = scaling.inputs["y"]?.bindings.first, let divisor = constantScalar(y), divisor != 0
            {
                factor = 1 / divisor
            }
            guard let factor, factor.isFinite, var (next, nextOp) = soleConsumer(of: scaling) else { continue }
            var positions = [first, scaleAt]
            var mask: MILBinding?
            if nextOp.type == "add", let scaledName = scaling.outputs.first?.name {
                let (x, y) = (nextOp.inputs["x"]?.bindings.first, nextOp.inputs["y"]?.bindings.first)
                mask = name(x) == scaledName ? y : name(y) == scaledName ? x : nil
                guard mask != nil, name(mask) != scaledName, let (after, afterOp) = soleConsumer(of: nextOp) else {
                    continue
                }
                positions.append(next)
                (next, nextOp) = (after, afterOp)
            }
            guard nextOp.type == "softmax", isLastAxis(nextOp, context, constantScalar),
                let (last, product) = soleConsumer(of: nextOp),
                product.type == "matmul", name(product.inputs["x"]?.bindings.first) == nextOp.outputs.first?.name,
                flag(product, "transpose_x") == false, flag(product, "transpose_y") == false,
                let value = product.inputs["y"]?.bindings.first, product.outputs.count == 1
            else { continue }
            positions += [next, last]
            guard positions == positions.sorted() else { continue }
            var inputs: MILNamedValues<MILArgument> = [
                "query": MILArgument(bindings: [query]), "key": MILArgument(bindings: [key]),
                "value": MILArgument(bindings: [value]),
            ]
            if let mask { inputs["attn_mask"] = MILArgument(bindings: [mask]) }
            let operation = MILOperation(
                type: "scaled_dot_product_attention", inputs: inputs, outputs: product.outputs, blocks: [],
                attributes: product.attributes)
            chains.append(AttentionChain(positions: positions, scale: Float(factor), operation: operation))
        }
        // Chains never share an op (each intermediate has one use), but keep the first of any
        // overlap to be safe.
        var taken = Set<Int>()
        return chains.filter { chain in
            guard taken.isDisjoint(with: chain.positions) else { return false }
            taken.formUnion(chain.positions)
            return true
        }
    }

    /// The step: `MLTensor.scaledDotProductAttention` on the chain's operands with its scale,
    /// or, when the mask would broadcast the scores to a larger shape, the chain's ops as
    /// written.
    func step(context: LoweringContext) throws -> LoweredStep {
        var lowering = OperationLowering(operation: operation, context: context)
        let scale = scale
        let compute: LoweredCompute = try lowering.checkingShapes { lowering in
            let (q, k, v) = (try lowering.tensor("query"), try lowering.tensor("key"), try lowering.tensor("value"))
            let mask = try lowering.optionalTensor("attn_mask")
            return { args in
                let (query, key, value) = (args[q].asFloat, args[k].asFloat, args[v].asFloat)
                let m = mask.map { args[$0].asFloat }
                if let m, query.rank >= 2, key.rank >= 2 {
                    let scores = Array(query.shape.dropLast()) + [key.shape[key.rank - 2]]
                    if !AttentionChain.broadcasts(m.shape, to: scores) {
                        let s = query.matmul(key.swappingLastAxes) * scale + m
                        return [s.softmax(alongAxis: -1).matmul(value)]
                    }
                }
                return [MLTensor.scaledDotProductAttention(query: query, key: key, value: value, mask: m, scale: scale)]
            }
        }
        let name = operation.name ?? operation.outputs.first?.name ?? "?"
        let results = operation.outputs.map { context.define($0.name, type: $0.type) }
        return LoweredStep(
            type: "scaled_dot_product_attention", name: name, operands: lowering.operands, results: results,
            declaredShapes: operation.outputs.map { LoweredFunction.checkableShape($0.type) }, batchRule: .attention,
            compute: compute)
    }

    /// Whether `shape` broadcasts to `target` without enlarging it (NumPy's rule, from the right).
    static func broadcasts(_ shape: [Int], to target: [Int]) -> Bool {
        guard shape.count <= target.count else { return false }
        return zip(shape.reversed(), target.reversed()).allSatisfy { $0 == $1 || $0 == 1 }
    }

    /// A binding's value when it is a constant holding one number.
    private static func constantScalar(_ binding: MILBinding, _ context: LoweringContext) -> Double? {
        let constant: MILConstant?
        switch binding {
        case .name(let value): constant = context.constants[value]
        case .value(let value): constant = try? context.constant(value, what: "literal")
        }
        guard let values = constant?.doubles, values.count == 1 else { return nil }
        return values[0]
    }

    /// Whether a `softmax` runs along the last axis of its input: axis -1, or rank - 1 with the
    /// input's rank declared.
    private static func isLastAxis(
        _ softmax: MILOperation, _ context: LoweringContext, _ constantScalar: (MILBinding) -> Double?
    ) -> Bool {
        guard let binding = softmax.inputs["axis"]?.bindings.first else { return true }  // default -1
        guard let axis = constantScalar(binding) else { return false }
        if axis == -1 { return true }
        guard case .name(let x)? = softmax.inputs["x"]?.bindings.first,
            let rank = context.types[x]?.tensorType?.rank, rank > 0
        else { return false }
        return Int(axis) == rank - 1
    }
}
