import TesseraKernels
import TesseraTensor

/// `simpleRecurrent`, `gru`, `uniDirectionalLSTM` and `biDirectionalLSTM` on the shared
/// recurrent layer (`RecurrentLayer`, `MLTensor.recurrent`): the weights are packed once at
/// load and each prediction adds one graph node.
///
/// Inputs are `[x, h_in, (c_in)]` (a bidirectional LSTM: `[x, h_f, c_f, h_b, c_b]`) with `x`
/// `[Seq, Batch, I, 1, 1]` and states `[1, Batch, H, 1, 1]`; missing states are zeros.
/// Outputs, in the same order, are `y` (`[Seq, Batch, D·H, 1, 1]` with `sequenceOutput`, else
/// `[1, Batch, D·H, 1, 1]`) and the final states `[1, Batch, H, 1, 1]`. A `reverseInput`
/// layer writes the state of its `k`-th step at row `k`.
extension NeuralNetworkLayerType {
    static let recurrentLayers: [NeuralNetworkLayerType] = [
        NeuralNetworkLayerType(field: 400, cost: .matmul) { layer in try simpleRecurrent(&layer) },
        NeuralNetworkLayerType(field: 410, cost: .matmul) { layer in try gru(&layer) },
        NeuralNetworkLayerType(field: 420, cost: .matmul) { layer in try lstm(&layer, bidirectional: false) },
        NeuralNetworkLayerType(field: 430, cost: .matmul) { layer in try lstm(&layer, bidirectional: true) },
    ]

    /// `SimpleRecurrentLayerParams`: `inputVectorSize = 1`, `outputVectorSize = 2`,
    /// `activation = 10`, `sequenceOutput = 15`, `hasBiasVector = 20`, `weightMatrix = 30`
    /// (`[H, I]`), `recursionMatrix = 31` (`[H, H]`), `biasVector = 32`, `reverseInput = 100`.
    static func simpleRecurrent(_ layer: inout NeuralNetworkLayerLowering) throws -> LoweredCompute {
        let p = layer.params
        let (i, h) = try recurrentSizes(layer)
        let activation = try recurrentActivation(try layer.message(10, "ActivationParams"), default: .tanh, layer)
        let weights = RecurrentDirectionWeights(
            input: try layer.weights(30, count: h * i, what: "weightMatrix"),
            recurrent: try layer.weights(31, count: h * h, what: "recursionMatrix"),
            inputBias: p.bool(20) ? try layer.weights(32, count: h, what: "biasVector") : nil)
        let parameters = RecurrentParameters(
            cell: .rnn(activation: activation), direction: p.bool(100) ? .reverse : .forward, inputSize: i,
            hiddenSize: h, outputSequence: p.bool(15))
        return try recurrentCompute(layer, parameters, [weights])
    }

    /// `GRULayerParams`: sizes 1, 2; `activations = 10` (gates, candidate), `sequenceOutput =
    /// 15`, `hasBiasVectors = 20`, the update / reset / output matrices 30–32, recursion
    /// matrices 50–52, biases 70–72, `reverseInput = 100`. The reset gate multiplies the state
    /// before the recursion matrix.
    static func gru(_ layer: inout NeuralNetworkLayerLowering) throws -> LoweredCompute {
        let p = layer.params
        let (i, h) = try recurrentSizes(layer)
        let activations = try layer.messages(10, "ActivationParams")
        let gate = try recurrentActivation(activations.first, default: .sigmoid, layer)
        let candidate = try recurrentActivation(activations.dropFirst().first, default: .tanh, layer)
        // The kernel's gate order is [r, z, o].
        func stacked(_ fields: [Int], count: Int, what: String) throws -> [Float] {
            try fields.flatMap { try layer.weights($0, count: count, what: what) }
        }
        let weights = RecurrentDirectionWeights(
            input: try stacked([31, 30, 32], count: h * i, what: "gate weight matrix"),
            recurrent: try stacked([51, 50, 52], count: h * h, what: "gate recursion matrix"),
            inputBias: p.bool(20) ? try stacked([71, 70, 72], count: h, what: "gate bias vector") : nil)
        let parameters = RecurrentParameters(
            cell: .gru(gate: gate, candidate: candidate, resetAfter: false),
            direction: p.bool(100) ? .reverse : .forward,
            inputSize: i, hiddenSize: h, outputSequence: p.bool(15))
        return try recurrentCompute(layer, parameters, [weights])
    }

    /// `UniDirectionalLSTMLayerParams` (`activations = 10`, `params = 15`, `weightParams = 20`,
    /// `reverseInput = 100`) or `BiDirectionalLSTMLayerParams` (`activationsForwardLSTM = 10`,
    /// `activationsBackwardLSTM = 11`, `params = 15`, two `weightParams = 20`). `LSTMParams`:
    /// `sequenceOutput = 10`, `hasBiasVectors = 20`, `forgetBias = 30` (adds 1 to the forget
    /// bias), `hasPeepholeVectors = 40`, `coupledInputAndForgetGate = 50`, `cellClipThreshold =
    /// 60` (50 when 0).
    static func lstm(_ layer: inout NeuralNetworkLayerLowering, bidirectional: Bool) throws -> LoweredCompute {
        let p = layer.params
        let (i, h) = try recurrentSizes(layer)
        let options = try layer.message(15, "LSTMParams") ?? ProtobufFieldTable()
        let activations = try layer.messages(10, "ActivationParams")
        if bidirectional {
            let backward = try layer.messages(11, "ActivationParams")
            guard backward.count == activations.count,
                try zip(backward, activations).allSatisfy({
                    try recurrentActivation($0, default: .sigmoid, layer)
                        == recurrentActivation($1, default: .sigmoid, layer)
                })
            else { throw layer.unsupported("different forward and backward activations") }
        }
        let cell = LSTMCell(
            gate: try recurrentActivation(activations.first, default: .sigmoid, layer),
            cell: try recurrentActivation(activations.dropFirst().first, default: .tanh, layer),
            output: try recurrentActivation(activations.dropFirst(2).first, default: .tanh, layer),
            clip: nonZero(options.float(60), 50), hasPeephole: options.bool(40),
            coupledInputForget: options.bool(50))
        let weightMessages = try layer.messages(20, "LSTMWeightParams")
        guard weightMessages.count == (bidirectional ? 2 : 1) else {
            throw layer.invalid("expected \(bidirectional ? 2 : 1) weightParams, got \(weightMessages.count)")
        }
        var directions: [RecurrentDirectionWeights] = []
        for message in weightMessages {
            // The kernel's gate order is [i, f, o, z]; the message's fields are i, f, z, o.
            func stacked(_ fields: [Int], count: Int, what: String) throws -> [Float] {
                try fields.flatMap { field in
                    do {
                        return try NeuralNetworkWeights.floats(
                            try message.message(field, "WeightParams"), count: count, what: what)
                    } catch let error as OperandError {
                        throw layer.invalid(error.message)
                    }
                }
            }
            var bias: [Float]?
            if options.bool(20) {
                bias = try stacked([40, 41, 43, 42], count: h, what: "gate bias vector")
            }
            if options.bool(30) {
                var b = bias ?? [Float](repeating: 0, count: 4 * h)
                for k in h..<(2 * h) { b[k] += 1 }
                bias = b
            }
            directions.append(
                RecurrentDirectionWeights(
                    input: try stacked([1, 2, 4, 3], count: h * i, what: "gate weight matrix"),
                    recurrent: try stacked([20, 21, 23, 22], count: h * h, what: "gate recursion matrix"),
                    inputBias: bias,
                    peephole: options.bool(40) ? try stacked([60, 61, 62], count: h, what: "peephole vector") : nil))
        }
        let parameters = RecurrentParameters(
            cell: .lstm(cell), direction: bidirectional ? .bidirectional : p.bool(100) ? .reverse : .forward,
            inputSize: i, hiddenSize: h, outputSequence: options.bool(10))
        return try recurrentCompute(layer, parameters, directions)
    }

    /// `inputVectorSize = 1` and `outputVectorSize = 2`, checked positive.
    static func recurrentSizes(_ layer: NeuralNetworkLayerLowering) throws -> (input: Int, hidden: Int) {
        let (i, h) = (layer.params.size(1) ?? 0, layer.params.size(2) ?? 0)
        guard i >= 1, h >= 1 else { throw layer.invalid("inputVectorSize and outputVectorSize must be positive") }
        return (i, h)
    }

    /// An `ActivationParams` message as a recurrent activation (`fallback` when absent).
    static func recurrentActivation(
        _ params: ProtobufFieldTable?, default fallback: RecurrentActivation, _ layer: NeuralNetworkLayerLowering
    ) throws -> RecurrentActivation {
        guard let params, let kind = params.fields.keys.filter({ $0 >= 5 }).max() else { return fallback }
        let values = (try? params.message(kind, "ActivationParams")) ?? ProtobufFieldTable()
        // An empty parameter message (coremltools writes one for a recurrent layer's hard
        // sigmoid) means the usual constants: 0.2x + 0.5, 1·tanh(1·x), 1·x + 0.
        func parameters(_ alpha: Float, _ beta: Float) -> (Float, Float) {
            values.has(1) || values.has(2) ? (values.float(1) ?? 0, values.float(2) ?? 0) : (alpha, beta)
        }
        switch kind {
        case 5:
            let (alpha, beta) = parameters(1, 0)
            return .linear(alpha: alpha, beta: beta)
        case 10: return .relu
        case 30: return .tanh
        case 31:
            let (alpha, beta) = parameters(1, 1)
            return .scaledTanh(alpha: alpha, beta: beta)
        case 40: return .sigmoid
        case 41:
            let (alpha, beta) = parameters(0.2, 0.5)
            return .sigmoidHard(alpha: alpha, beta: beta)
        default: throw layer.unsupported("a recurrent activation of kind \(kind)")
        }
    }

    /// Packs the weights and returns the closure running the layer.
    static func recurrentCompute(
        _ layer: NeuralNetworkLayerLowering, _ parameters: RecurrentParameters, _ weights: [RecurrentDirectionWeights]
    ) throws -> LoweredCompute {
        let recurrent: RecurrentLayer
        do {
            recurrent = try RecurrentLayer(parameters, weights: weights)
        } catch {
            throw layer.invalid("\(error)")
        }
        let isLSTM = parameters.cell.stateCount == 2
        let directions = parameters.direction.count
        let statesPerDirection = isLSTM ? 2 : 1
        try layer.requireCounts(inputs: 1...(1 + directions * statesPerDirection), outputs: nil)
        let outputCount = layer.layer.outputs.count
        guard (1...(1 + directions * statesPerDirection)).contains(outputCount) else {
            throw layer.invalid("expected 1 to \(1 + directions * statesPerDirection) outputs, got \(outputCount)")
        }
        let inputCount = layer.inputCount
        let (h, name) = (parameters.hiddenSize, layer.layer.name)
        return { args in
            let x = args[0].asFloat
            try require(
                (x.rank == 5 && x.shape[3] == 1 && x.shape[4] == 1) || x.rank == 3,
                "\(name): the input must be [Seq, Batch, \(parameters.inputSize), 1, 1], got \(x.shape)")
            let (steps, batch) = (x.shape[0], x.shape[1])
            // State input k (1-based after x) of direction d and kind s (0: h, 1: c).
            func state(_ kind: Int) throws -> MLTensor {
                var parts: [MLTensor] = []
                for d in 0..<directions {
                    let index = 1 + d * statesPerDirection + kind
                    guard index < inputCount else {
                        parts.append(MLTensor(repeating: 0, shape: [batch, h]))
                        continue
                    }
                    let s = args[index].asFloat
                    try require(
                        s.scalarCount == batch * h, "\(name): state \(s.shape) does not hold [1, \(batch), \(h), 1, 1]")
                    parts.append(s.reshapedIfNeeded(to: [batch, h]))
                }
                return parts.count == 1 ? parts[0] : MLTensor(concatenating: parts, alongAxis: 1)
            }
            let out = x.reshapedIfNeeded(to: [steps, batch, x.shape[2]]).recurrent(
                recurrent, initialH: try state(0), initialC: isLSTM ? try state(1) : nil)
            var results = [out.sequence.expandingShape(at: 3, 4)]
            for d in 0..<directions {
                let finals = [out.finalH] + (out.finalC.map { [$0] } ?? [])
                for final in finals {
                    let part = directions == 1 ? final : final.narrowed(alongAxis: 1, start: d * h, count: h)
                    results.append(part.reshapedIfNeeded(to: [1, batch, h, 1, 1]))
                }
            }
            return Array(results.prefix(outputCount))
        }
    }
}
