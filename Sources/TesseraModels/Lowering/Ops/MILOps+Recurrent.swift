import TesseraKernels
import TesseraTensor

/// `lstm`, `gru`, `rnn` (iOS 15, the fp16-capable iOS 17 forms, and iOS 18 `gru`'s
/// `reset_after` / `input_bias`): each one ``RecurrentLayer`` packed at load and one
/// ``MLTensor/recurrent(_:initialH:initialC:)`` node per prediction.
///
/// MIL's semantics, as coremltools' reference implementations check them: `x [T, B, I]`,
/// states `[B, D·H]`; a `reverse` layer returns its steps in processing order (output row `k`
/// consumed `x[T-1-k]`), the reverse half of a `bidirectional` LSTM in input order; without
/// `output_sequence` the first result is the final hidden state `[1, B, D·H]`. `clip` bounds
/// the LSTM cell state. `gru` stacks its weights `[r, o, z]` and applies the reset gate before
/// the hidden product (`o = act(W_o x + R_o (r ⊙ h) + b_o)`) unless iOS 18's `reset_after`
/// (`o = act(W_o x + b_io + r ⊙ (R_o h + b_o))`, PyTorch's GRU, with `input_bias` the `b_i`).
extension MILOp {
    static let recurrentOps: [MILOp] = [
        // The batch is axis 1 of x and of the states' axis 0: batches run as a loop.
        MILOp("lstm", batch: .notSeparable, cost: .recurrent) { lowering in
            try lowerRecurrent(&lowering, kind: .lstm)
        },
        MILOp("gru", batch: .notSeparable, cost: .recurrent) { lowering in
            try lowerRecurrent(&lowering, kind: .gru)
        },
        MILOp("rnn", batch: .notSeparable, cost: .recurrent) { lowering in
            try lowerRecurrent(&lowering, kind: .rnn)
        },
    ]

    /// Which MIL recurrent op is being lowered.
    enum RecurrentKind { case rnn, gru, lstm }

    /// Reads the op's constants, packs its layer and registers `x` and the initial states.
    static func lowerRecurrent(_ lowering: inout OperationLowering, kind: RecurrentKind) throws -> LoweredCompute {
        func activation(_ name: String, default fallback: RecurrentActivation) throws -> RecurrentActivation {
            guard let text = try lowering.string(name) else { return fallback }
            guard let value = RecurrentActivation(milName: text) else {
                throw lowering.invalid(
                    "\(name) '\(text)' is not one of sigmoid, tanh, relu, linear, scaled_tanh, hard_sigmoid")
            }
            return value
        }
        let directionName = try lowering.string("direction") ?? "forward"
        let direction: RecurrentDirection
        switch directionName {
        case "forward": direction = .forward
        case "reverse": direction = .reverse
        case "bidirectional" where kind == .lstm: direction = .bidirectional
        default: throw lowering.invalid("direction '\(directionName)' is not supported for \(lowering.operation.type)")
        }
        let cell: RecurrentCell
        switch kind {
        case .rnn: cell = .rnn(activation: try activation("activation", default: .tanh))
        case .gru:
            cell = .gru(
                gate: try activation("recurrent_activation", default: .sigmoid),
                candidate: try activation("activation", default: .tanh),
                resetAfter: try lowering.bool("reset_after") ?? false)
        case .lstm:
            cell = .lstm(
                LSTMCell(
                    gate: try activation("recurrent_activation", default: .sigmoid),
                    cell: try activation("cell_activation", default: .tanh),
                    output: try activation("activation", default: .tanh),
                    clip: try lowering.double("clip").map { Float($0) },
                    hasPeephole: try lowering.constant("peephole") != nil))
        }
        let inputMatrix = try recurrentMatrix(lowering, "weight_ih")
        let hiddenMatrix = try recurrentMatrix(lowering, "weight_hh")
        let gates = cell.gateCount
        let hidden = hiddenMatrix.shape[1]
        guard hidden > 0, hiddenMatrix.shape[0] == gates * hidden, inputMatrix.shape[0] == gates * hidden else {
            throw lowering.invalid(
                "weight_ih \(inputMatrix.shape) and weight_hh \(hiddenMatrix.shape) must be [\(gates)·H, I] and [\(gates)·H, H]"
            )
        }
        let parameters = RecurrentParameters(
            cell: cell, direction: direction, inputSize: inputMatrix.shape[1], hiddenSize: hidden,
            outputSequence: try lowering.bool("output_sequence") ?? false)
        var directions = [
            try recurrentWeights(lowering, kind: kind, hidden: hidden, suffix: "", cell: cell)
        ]
        if direction == .bidirectional {
            directions.append(try recurrentWeights(lowering, kind: kind, hidden: hidden, suffix: "_back", cell: cell))
        }
        let layer: RecurrentLayer
        do throws(OpError) {
            layer = try RecurrentLayer(parameters, weights: directions)
        } catch {
            throw lowering.invalid(error.message)
        }
        let x = try lowering.tensor("x")
        let initialH = try lowering.tensor("initial_h")
        let initialC = kind == .lstm ? try lowering.tensor("initial_c") : nil
        return { args in
            let out = args[x].asFloat.recurrent(
                layer, initialH: args[initialH].asFloat, initialC: initialC.map { args[$0].asFloat })
            return [out.sequence, out.finalH] + (out.finalC.map { [$0] } ?? [])
        }
    }

    /// A constant rank-2 weight's floats and shape.
    static func recurrentMatrix(_ lowering: OperationLowering, _ name: String) throws -> (values: [Float], shape: [Int])
    {
        guard let constant = try lowering.constant(name) else {
            throw lowering.invalid("the required input '\(name)' is missing")
        }
        guard constant.shape.count == 2, let values = constant.floatValues else {
            throw lowering.invalid("\(name) must be a rank-2 floating-point constant, got shape \(constant.shape)")
        }
        return (values, constant.shape)
    }

    /// The optional constant vector `name` of `count` floats.
    static func recurrentVector(_ lowering: OperationLowering, _ name: String, count: Int) throws -> [Float]? {
        guard let constant = try lowering.constant(name) else { return nil }
        guard let values = constant.floatValues, values.count == count else {
            throw lowering.invalid("\(name) must be \(count) floats, got shape \(constant.shape)")
        }
        return values
    }

    /// One direction's weights (`suffix` "" or "_back"), reordered from MIL's gate order.
    static func recurrentWeights(
        _ lowering: OperationLowering, kind: RecurrentKind, hidden: Int, suffix: String, cell: RecurrentCell
    ) throws -> RecurrentDirectionWeights {
        let width = cell.gateCount * hidden
        let input = try recurrentMatrix(lowering, "weight_ih" + suffix)
        let recurrent = try recurrentMatrix(lowering, "weight_hh" + suffix)
        guard input.shape[0] == width, recurrent.shape == [width, hidden] else {
            throw lowering.invalid(
                "weight_ih\(suffix) \(input.shape) and weight_hh\(suffix) \(recurrent.shape) must be [\(width), I] and [\(width), \(hidden)]"
            )
        }
        let bias = try recurrentVector(lowering, "bias" + suffix, count: width)
        switch kind {
        case .rnn, .lstm:
            let peephole = kind == .lstm ? try recurrentVector(lowering, "peephole" + suffix, count: 3 * hidden) : nil
            return RecurrentDirectionWeights(
                input: input.values, recurrent: recurrent.values, inputBias: bias, peephole: peephole)
        case .gru:
            // MIL stacks [r, o, z]; the kernel reads [r, z, o].
            func reordered(_ values: [Float]) -> [Float] {
                let block = values.count / 3
                return Array(values[0..<block] + values[2 * block..<3 * block] + values[block..<2 * block])
            }
            let inputBias = try recurrentVector(lowering, "input_bias", count: width)
            return RecurrentDirectionWeights(
                input: reordered(input.values), recurrent: reordered(recurrent.values),
                inputBias: inputBias.map(reordered), hiddenBias: bias.map(reordered))
        }
    }
}
