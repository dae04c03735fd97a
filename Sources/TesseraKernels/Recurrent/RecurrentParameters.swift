/// The cell of a recurrent layer: what one time step computes from the input projection
/// `a = W·x_t + b_i` and the hidden projection `r = R·h_{t-1} + b_h` of each gate.
///
/// Gates are stacked in this order in every weight and bias (``RecurrentDirectionWeights``):
///
/// | cell | gates (`G`) |
/// |---|---|
/// | `rnn` | `[h]` (1) |
/// | `gru` | `[r (reset), z (update), o (candidate)]` (3) |
/// | `lstm` | `[i (input), f (forget), o (output), z (cell)]` (4), MIL's order |
///
/// MIL's `gru` stacks `[r, o, z]`, PyTorch `[r, z, n]`, PyTorch's LSTM `[i, f, g, o]`: reorder
/// to the table when packing.
package enum RecurrentCell: Sendable, Hashable {
    /// `h_t = activation(a + r)`.
    case rnn(activation: RecurrentActivation)
    /// `r_t = gate(a_r + r_r)`, `z_t = gate(a_z + r_z)`;
    /// with `resetAfter` (PyTorch, Keras `reset_after`, MIL iOS 18 `reset_after`)
    /// `o_t = candidate(a_o + r_t ⊙ (R_o·h_{t-1} + b_ho))`, otherwise (MIL, NeuralNetwork `gru`)
    /// `o_t = candidate(a_o + R_o·(r_t ⊙ h_{t-1}) + b_ho)`; then `h_t = (1 - z_t) ⊙ o_t + z_t ⊙ h_{t-1}`.
    case gru(gate: RecurrentActivation, candidate: RecurrentActivation, resetAfter: Bool)
    /// See ``LSTMCell``.
    case lstm(LSTMCell)

    /// The number of gates `G` stacked in the weights.
    package var gateCount: Int {
        switch self {
        case .rnn: 1
        case .gru: 3
        case .lstm: 4
        }
    }

    /// The number of state tensors the layer returns: 2 (`h`, `c`) for an LSTM, else 1.
    package var stateCount: Int {
        if case .lstm = self { return 2 }
        return 1
    }

    /// The MIL / Core ML name, for messages.
    package var name: String {
        switch self {
        case .rnn: "rnn"
        case .gru: "gru"
        case .lstm: "lstm"
        }
    }
}

/// What one LSTM step computes, with `a_g + r_g` each gate's input and hidden projections:
///
/// ```
/// i = gate(a_i + r_i + p_i ⊙ c_{t-1})        f = gate(a_f + r_f + p_f ⊙ c_{t-1})
/// z = cell(a_z + r_z)
/// c_t = f ⊙ c_{t-1} + i ⊙ z                  (coupled: (1 - i) ⊙ c_{t-1} + i ⊙ z)
/// c_t = clamp(c_t, -clip, clip)              (when clip is set)
/// o = gate(a_o + r_o + p_o ⊙ c_t)            h_t = o ⊙ output(c_t)
/// ```
///
/// (MIL `lstm`'s `recurrent_activation`, `cell_activation`, `activation`; the peephole `p`
/// `[i, f, o]`; clipping the cell state as coremltools' reference and the NeuralNetwork
/// `cellClipThreshold` do.)
package struct LSTMCell: Sendable, Hashable {
    /// The activation of the input, forget and output gates (`sigmoid` by default).
    package var gate: RecurrentActivation
    /// The activation of the cell gate `z` (`tanh`).
    package var cell: RecurrentActivation
    /// The activation of the cell state in `h_t` (`tanh`).
    package var output: RecurrentActivation
    /// The cell state's bound, or `nil` for none.
    package var clip: Float?
    /// Whether the peephole weights are used (otherwise they are zeros and skipped).
    package var hasPeephole: Bool
    /// Whether the forget gate is `1 - i` (NeuralNetwork `coupledInputAndForgetGate`).
    package var coupledInputForget: Bool

    /// A cell; the defaults are MIL's.
    package init(
        gate: RecurrentActivation = .sigmoid, cell: RecurrentActivation = .tanh, output: RecurrentActivation = .tanh,
        clip: Float? = nil, hasPeephole: Bool = false, coupledInputForget: Bool = false
    ) {
        self.gate = gate
        self.cell = cell
        self.output = output
        self.clip = clip
        self.hasPeephole = hasPeephole
        self.coupledInputForget = coupledInputForget
    }
}

/// The order a recurrent layer reads the sequence in.
package enum RecurrentDirection: Sendable, Hashable {
    /// `t = 0, 1, …, T-1`.
    case forward
    /// `t = T-1, …, 0`.
    case reverse
    /// A forward and a reverse pass with weights of their own; the hidden size doubles
    /// (`[forward | reverse]` on the last axis of every output).
    case bidirectional

    /// 2 for `bidirectional`, else 1.
    package var count: Int { self == .bidirectional ? 2 : 1 }
}

/// Everything about one recurrent layer but its weights and the sequence's length and batch:
/// the graph op's identity (``RecurrentKernels/run(_:steps:batch:x:initialH:initialC:weights:output:)``).
///
/// **Output.** One row-major Float32 tensor `[S + stateCount, B, D·H]` (`D` the directions):
/// rows `0..<S` the hidden state of every step when ``outputSequence`` (`S = T`, else `S = 0`),
/// then the final `h`, then (LSTM) the final `c`. The reverse pass of a bidirectional layer
/// writes the state that consumed `x_t` at row `t`; a `.reverse` layer writes step `k` (which
/// consumed `x_{T-1-k}`) at row `k`, as MIL's ops do, unless ``reverseOutputInInputOrder``.
/// The final states of the reverse pass are those after `x_0`.
package struct RecurrentParameters: Sendable, Hashable {
    /// What one step computes.
    package var cell: RecurrentCell
    /// The reading order.
    package var direction: RecurrentDirection
    /// `I`, the last axis of `x`.
    package var inputSize: Int
    /// `H`, per direction.
    package var hiddenSize: Int
    /// Whether the hidden state of every step is returned (else only the final states).
    package var outputSequence: Bool
    /// For `.reverse`: write the state that consumed `x_t` at row `t` (input order) rather
    /// than at row `T-1-t` (processing order, MIL's `lstm`/`gru`/`rnn`).
    package var reverseOutputInInputOrder: Bool

    /// A layer's parameters.
    package init(
        cell: RecurrentCell, direction: RecurrentDirection, inputSize: Int, hiddenSize: Int, outputSequence: Bool,
        reverseOutputInInputOrder: Bool = false
    ) {
        self.cell = cell
        self.direction = direction
        self.inputSize = inputSize
        self.hiddenSize = hiddenSize
        self.outputSequence = outputSequence
        self.reverseOutputInInputOrder = reverseOutputInInputOrder
    }

    /// `G · H`: the width of one direction's stacked gates.
    package var gateWidth: Int { cell.gateCount * hiddenSize }

    /// The width of one output row, `D · H`.
    package var outputWidth: Int { direction.count * hiddenSize }

    /// Whether the cell has peephole weights in its packed block.
    var peepholeCount: Int {
        if case .lstm = cell { return 3 * hiddenSize }
        return 0
    }

    /// Float offsets inside one direction's packed block: `W_ih` as `[I, G·H]` (transposed),
    /// `W_hh` as `[H, G·H]`, the input bias `[G·H]`, the hidden bias `[G·H]`, (LSTM) the
    /// peephole `[3·H]`.
    package var packedLayout: (recurrent: Int, inputBias: Int, hiddenBias: Int, peephole: Int, count: Int) {
        let width = gateWidth
        let recurrent = inputSize * width
        let inputBias = recurrent + hiddenSize * width
        let hiddenBias = inputBias + width
        let peephole = hiddenBias + width
        return (recurrent, inputBias, hiddenBias, peephole, peephole + peepholeCount)
    }

    /// The packed weights' element count, every direction.
    package var packedCount: Int { direction.count * packedLayout.count }

    /// The output's shape for a sequence of `steps` and a batch of `batch`.
    package func outputShape(steps: Int, batch: Int) -> [Int] {
        [(outputSequence ? steps : 0) + cell.stateCount, batch, outputWidth]
    }
}
