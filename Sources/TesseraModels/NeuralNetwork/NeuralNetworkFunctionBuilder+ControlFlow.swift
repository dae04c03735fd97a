import TesseraProtobuf
import TesseraTensor

/// The NeuralNetwork control-flow layers: `branch`, `loop`, `loopBreak` and `loopContinue`
/// (spec 4), on the nested-block machinery of the ML program `cond` and `while_loop`
/// (``LoweredBlock``).
///
/// A control-flow layer's networks read the blobs of the enclosing scope and write blobs of it
/// with `copy` layers (the one layer that may overwrite a blob). Each network is lowered at
/// load into a ``LoweredBlock`` in the builder's slot numbering, starting from the enclosing
/// scope's blobs; the layer becomes one step whose operands are the blobs its networks read
/// from outside and whose results are the blobs they write:
///
/// - `branch` (`ifBranch = 1`, `elseBranch = 2`): its input is the condition, true when its
///   absolute value exceeds 1e-6. Its results are the blobs either network overwrites and the
///   new blobs both define; a blob one network leaves alone keeps its value.
/// - `loop` (`maxLoopIterations = 1`, `conditionVar = 2`, `conditionNetwork = 3`,
///   `bodyNetwork = 4`; an input, when given, is the iteration limit): the loop variables are
///   the enclosing scope's blobs that the condition or body networks write. Without a
///   condition network it runs `maxLoopIterations` times; with one, while `conditionVar` is
///   true (|x| > 1e-6) and, when a limit is set, fewer than that many times. Variables are
///   materialized each iteration (the graph does not grow with the count); more than
///   ``MILOp/maximumLoopIterations`` iterations fail the prediction.
/// - `loopBreak` and `loopContinue` stop the body (a ``LoweredBlock/Signal``); a `branch`
///   that one stops passes it on with the blobs written so far.
///
/// Blobs that a loop's networks define for the first time are not visible after the loop,
/// nor are new blobs only one branch defines: a later layer reading one fails the load naming
/// the blob.
extension NeuralNetworkFunctionBuilder {
    /// The `layer` field numbers of the control-flow layers, which the builder lowers itself
    /// (their networks are lowered like the enclosing one).
    static let controlFlowFields: Set<Int> = [605, 615, 620, 625]

    /// The most control-flow layers nested in one another.
    static let maximumNestingDepth = 32

    /// Lowers a `branch`, `loop`, `loopBreak` or `loopContinue` layer.
    mutating func lowerControlFlow(_ layer: CoreMLSpec.NeuralNetworkLayer, label: String) throws {
        switch layer.typeField {
        case 605: try lowerBranch(layer, label: label)
        case 615: try lowerLoop(layer, label: label)
        default:
            guard loopDepth > 0 else {
                throw error(.invalidSpecification, "\(label) is not inside a loop's body network")
            }
            let kind: LoweredBlock.Signal.Kind = layer.typeField == 620 ? .breakLoop : .continueLoop
            steps.append(
                LoweredStep(
                    type: layer.typeName, name: layer.name, operands: [], results: [], declaredShapes: [],
                    batchRule: .notSeparable, compute: { _ in throw LoweredBlock.Signal(kind: kind) }))
        }
    }

    /// `branch`: runs the if or the else network on the condition's value.
    private mutating func lowerBranch(_ layer: CoreMLSpec.NeuralNetworkLayer, label: String) throws {
        guard layer.inputs.count == 1 else {
            throw error(.invalidSpecification, "\(label) needs one input (the condition), has \(layer.inputs.count)")
        }
        let condition = try slot(of: layer.inputs[0], label: label)
        guard let ifLayers = try nestedLayers(layer, field: 1, label: label, what: "ifBranch") else {
            throw error(.invalidSpecification, "\(label) has no ifBranch network")
        }
        let elseLayers = try nestedLayers(layer, field: 2, label: label, what: "elseBranch") ?? []
        let outer = blobs
        let networks = [
            try lowerNetwork(ifLayers, label: label, scope: outer, enclosingLoops: loopDepth),
            try lowerNetwork(elseLayers, label: label, scope: outer, enclosingLoops: loopDepth),
        ]
        let written = Set(networks.flatMap { $0.definitions.keys })
        let exported = written.filter { name in
            outer[name] != nil || networks.allSatisfy { $0.blobs[name] != nil }
        }.sorted()
        let blocks = networks.map { network in
            LoweredBlock(
                inputSlots: [],
                outputDefinitions: exported.map { name in
                    (outer[name].map { [$0] } ?? []) + (network.definitions[name] ?? [])
                }, steps: network.steps, slotCount: slotCount)
        }
        var operands = [condition]
        let free = blocks.map { block in block.freeSlots.map { appendOperand($0, to: &operands) } }
        appendControlFlowStep(layer, operands: operands, defining: exported) { args in
            let pick = try NeuralNetworkFunctionBuilder.truth(args[0]) ? 0 : 1
            let (outputs, signal) = try blocks[pick].runStopping(inputs: [], free: free[pick].map { args[$0] })
            if let signal { throw LoweredBlock.Signal(kind: signal.kind, results: outputs) }
            return outputs
        }
    }

    /// `loop`: runs the body network while the condition network's `conditionVar` holds and
    /// the iteration limit allows.
    private mutating func lowerLoop(_ layer: CoreMLSpec.NeuralNetworkLayer, label: String) throws {
        guard layer.inputs.count <= 1 else {
            throw error(.invalidSpecification, "\(label) takes at most one input (the iteration limit)")
        }
        let p = layer.parameters
        let limitInput = try layer.inputs.first.map { try slot(of: $0, label: label) }
        let maxIterations = Int(clamping: p.uint(1) ?? 0)
        let conditionVar = p.string(2)
        guard let bodyLayers = try nestedLayers(layer, field: 4, label: label, what: "bodyNetwork") else {
            throw error(.invalidSpecification, "\(label) has no bodyNetwork")
        }
        // coremltools' builder writes an empty conditionNetwork for a loop without one.
        var conditionLayers = try nestedLayers(layer, field: 3, label: label, what: "conditionNetwork")
        if conditionVar.isEmpty && conditionLayers?.isEmpty == true { conditionLayers = nil }
        guard (conditionLayers == nil) == conditionVar.isEmpty else {
            throw error(
                .invalidSpecification, "\(label) must have both a conditionNetwork and a conditionVar, or neither")
        }
        let outer = blobs
        let written = Self.writtenBlobs(bodyLayers + (conditionLayers ?? []))
        let variables = written.filter { outer[$0] != nil }.sorted()
        // Each network starts from the enclosing scope with the variables as its inputs.
        func scope(_ inputs: [Int]) -> [String: Int] {
            var scope = outer
            for (name, slot) in zip(variables, inputs) { scope[name] = slot }
            return scope
        }
        var conditionBlock: LoweredBlock?
        if let conditionLayers {
            let inputs = variables.map { _ in newSlot() }
            let network = try lowerNetwork(conditionLayers, label: label, scope: scope(inputs), enclosingLoops: 0)
            guard let predicate = network.blobs[conditionVar] else {
                throw error(.invalidSpecification, "\(label): the conditionNetwork never defines '\(conditionVar)'")
            }
            conditionBlock = LoweredBlock(
                inputSlots: inputs,
                outputDefinitions: [[predicate]] + variables.map { [network.blobs[$0]!] }, steps: network.steps,
                slotCount: slotCount)
        }
        let inputs = variables.map { _ in newSlot() }
        let network = try lowerNetwork(bodyLayers, label: label, scope: scope(inputs), enclosingLoops: loopDepth + 1)
        let body = LoweredBlock(
            inputSlots: inputs,
            outputDefinitions: zip(variables, inputs).map { name, input in [input] + (network.definitions[name] ?? [])
            },
            steps: network.steps, slotCount: slotCount)
        let condition = conditionBlock
        var operands: [Int] = []
        let limit = limitInput.map { appendOperand($0, to: &operands) }
        let initial = variables.map { appendOperand(outer[$0]!, to: &operands) }
        let conditionFree = (condition?.freeSlots ?? []).map { appendOperand($0, to: &operands) }
        let bodyFree = body.freeSlots.map { appendOperand($0, to: &operands) }
        let name = layer.name
        appendControlFlowStep(layer, operands: operands, defining: variables) { args in
            var bound: Int? = maxIterations > 0 || condition == nil ? maxIterations : nil
            if let limit {
                let value = args[limit].asFloat
                try require(
                    value.scalarCount == 1, "loop '\(name)': the iteration limit has shape \(value.shape)")
                let raw = value.scalars(of: Float.self)[0]
                try require(raw.isFinite, "loop '\(name)': the iteration limit is \(raw)")
                bound = Int(Swift.min(Swift.max(raw, 0), 1e9).rounded(.towardZero))
            }
            var values = initial.map { args[$0] }
            let (conditionValues, bodyValues) = (conditionFree.map { args[$0] }, bodyFree.map { args[$0] })
            for iteration in 0...MILOp.maximumLoopIterations {
                if let bound, iteration >= bound { return values }
                if let condition {
                    let outputs = try condition.run(inputs: values, free: conditionValues)
                    values = Array(outputs.dropFirst())
                    MLTensor.materialize(values + [outputs[0]])
                    if !(try NeuralNetworkFunctionBuilder.truth(outputs[0])) { return values }
                } else {
                    MLTensor.materialize(values)
                }
                guard iteration < MILOp.maximumLoopIterations else { break }
                let (next, signal) = try body.runStopping(inputs: values, free: bodyValues)
                for (index, value) in next.enumerated() where value.rank != values[index].rank {
                    throw OperandError(
                        "loop '\(name)': '\(variables[index])' changes rank from \(values[index].shape) "
                            + "to \(value.shape)")
                }
                values = next
                if signal?.kind == .breakLoop { return values }
            }
            throw OperandError(
                "loop '\(name)' ran \(MILOp.maximumLoopIterations) times without its condition failing")
        }
    }

    /// A network nested in a control-flow layer, lowered from `scope` inside `enclosingLoops`
    /// loop bodies (a branch keeps its scope's count, a condition network has none): its
    /// steps, its final blobs and what it defined.
    private mutating func lowerNetwork(
        _ layers: [CoreMLSpec.NeuralNetworkLayer], label: String, scope: [String: Int], enclosingLoops: Int
    ) throws -> (steps: [LoweredStep], blobs: [String: Int], definitions: [String: [Int]]) {
        guard nestingDepth < Self.maximumNestingDepth else {
            throw error(
                .invalidSpecification,
                "\(label) nests control-flow layers more than \(Self.maximumNestingDepth) deep")
        }
        let saved = (steps, blobs, definitions, loopDepth)
        defer { (steps, blobs, definitions, loopDepth) = saved }
        (steps, blobs, definitions) = ([], scope, [:])
        nestingDepth += 1
        defer { nestingDepth -= 1 }
        loopDepth = enclosingLoops
        for layer in layers { try lower(layer) }
        return (steps, blobs, definitions)
    }

    /// The slot of blob `name`, which must be defined.
    private func slot(of name: String, label: String) throws -> Int {
        guard let slot = blobs[name] else {
            throw error(
                .invalidSpecification, "\(label) reads '\(name)', which no model input or earlier layer defines")
        }
        return slot
    }

    /// The layers of the `NeuralNetwork` message in parameter field `field`, `nil` when absent.
    private func nestedLayers(
        _ layer: CoreMLSpec.NeuralNetworkLayer, field: Int, label: String, what: String
    ) throws -> [CoreMLSpec.NeuralNetworkLayer]? {
        guard let bytes = layer.parameters.bytes(field) else { return nil }
        do {
            return try bytes.withUnsafeBytes { buffer in
                var reader = ProtobufReader(buffer, maxDepth: CoreMLSpec.Model.maxNestingDepth)
                return try CoreMLSpec.NeuralNetwork(from: &reader, kind: .plain).layers
            }
        } catch let problem as ModelFormatError {
            throw error(.invalidSpecification, "\(label): its \(what) network is malformed: \(problem.message)")
        }
    }

    /// The blobs `layers` write, their nested networks' included.
    static func writtenBlobs(_ layers: [CoreMLSpec.NeuralNetworkLayer]) -> Set<String> {
        var names = Set<String>()
        for layer in layers {
            names.formUnion(layer.outputs)
            let nested: [Int] =
                switch layer.typeField {
                case 605: [1, 2]
                case 615: [3, 4]
                default: []
                }
            for field in nested {
                guard let bytes = layer.parameters.bytes(field),
                    let inner = try? bytes.withUnsafeBytes({ buffer in
                        var reader = ProtobufReader(buffer, maxDepth: CoreMLSpec.Model.maxNestingDepth)
                        return try CoreMLSpec.NeuralNetwork(from: &reader, kind: .plain).layers
                    })
                else { continue }
                names.formUnion(writtenBlobs(inner))
            }
        }
        return names
    }

    /// Appends the step of control-flow `layer`: it reads every one of `operands`, runs
    /// `compute` whole (never split by batch), and its results define the blobs `names`, in
    /// order.
    private mutating func appendControlFlowStep(
        _ layer: CoreMLSpec.NeuralNetworkLayer, operands: [Int], defining names: [String],
        compute: @escaping LoweredCompute
    ) {
        let results = names.map { _ in newSlot() }
        steps.append(
            LoweredStep(
                type: layer.typeName, name: layer.name, operands: operands, results: results,
                declaredShapes: results.map { _ in nil }, valueReads: Array(operands.indices),
                batchRule: .notSeparable, compute: compute))
        for (name, slot) in zip(names, results) { define(name, slot) }
    }

    /// The index of `slot` among `operands`, appending it when it is not there yet.
    private func appendOperand(_ slot: Int, to operands: inout [Int]) -> Int {
        if let index = operands.firstIndex(of: slot) { return index }
        operands.append(slot)
        return operands.count - 1
    }

    /// A condition's truth: one value whose magnitude exceeds 1e-6.
    static func truth(_ predicate: MLTensor) throws -> Bool {
        try require(predicate.scalarCount == 1, "the condition has shape \(predicate.shape); it must be one value")
        return Swift.abs(predicate.asFloat.scalars(of: Float.self)[0]) > 1e-6
    }
}
