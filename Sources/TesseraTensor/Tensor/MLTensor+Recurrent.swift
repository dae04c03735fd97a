import TesseraGraph
import TesseraKernels

/// A recurrent layer ready to run: its ``RecurrentParameters`` and its weights, packed once
/// (when a model loads) into the constant tensor the kernel reads.
///
/// The one home of `rnn` / `gru` / `lstm` for every model format: the MIL lowering
/// (`MILOps+Recurrent.swift`) and the NeuralNetwork layers build one per layer and call
/// ``MLTensor/recurrent(_:initialH:initialC:)`` per prediction.
///
/// ```swift
/// let p = RecurrentParameters(cell: .gru(gate: .sigmoid, candidate: .tanh, resetAfter: false),
///                             direction: .forward, inputSize: 3, hiddenSize: 2, outputSequence: true)
/// let layer = try RecurrentLayer(p, weights: [RecurrentDirectionWeights(input: wIH, recurrent: wHH)])
/// let out = x.recurrent(layer, initialH: h0)     // x [T, B, 3], h0 [B, 2]
/// // out.sequence [T, B, 2], out.finalH [B, 2]
/// ```
package struct RecurrentLayer: Sendable {
    /// The layer's cell, direction and sizes.
    package let parameters: RecurrentParameters
    /// ``RecurrentParameters/packWeights(_:)``'s floats as a float32 `[packedCount]` tensor.
    package let packedWeights: MLTensor

    /// Packs `weights` (one ``RecurrentDirectionWeights`` per direction, forward first).
    ///
    /// - Throws: ``OpError`` (message `[lstm] …`) when the weights do not fit the parameters.
    package init(_ parameters: RecurrentParameters, weights: [RecurrentDirectionWeights]) throws(OpError) {
        self.parameters = parameters
        let packed = try parameters.packWeights(weights)
        packedWeights = MLTensor(shape: [packed.count], scalars: packed, scalarType: Float.self)
    }
}

/// What ``MLTensor/recurrent(_:initialH:initialC:)`` returns: views of one kernel result.
package struct RecurrentOutputs {
    /// `[T, B, D·H]`, the hidden state after every step (in the layer's output order), when
    /// the layer outputs the sequence; otherwise `[1, B, D·H]`, the final hidden state.
    package var sequence: MLTensor
    /// `[B, D·H]`, the final hidden state (`[forward | reverse]`).
    package var finalH: MLTensor
    /// `[B, D·H]`, an LSTM's final cell state; `nil` for `rnn` and `gru`.
    package var finalC: MLTensor?
}

extension MLTensor {
    /// Runs a recurrent layer over this sequence.
    ///
    /// **Tessera extension** (package). One graph node computes the whole layer
    /// (``GraphOp/recurrent(_:)``; ``RecurrentKernels`` describes the time loop); the three
    /// results are views of it.
    ///
    /// ```swift
    /// let out = x.recurrent(lstm, initialH: h0, initialC: c0)
    /// let (y, h, c) = (out.sequence, out.finalH, out.finalC!)
    /// ```
    ///
    /// - Parameters:
    ///   - layer: The packed layer.
    ///   - initialH: `[B, D·H]`, float32.
    ///   - initialC: `[B, D·H]`, float32; required for an LSTM, ignored otherwise.
    /// - Precondition: This tensor is float32 `[T, B, I]` with `I` the layer's input size,
    ///   and the states fit (a trap, or a recorded error inside `MLTensor.withShapeChecks`).
    package func recurrent(_ layer: RecurrentLayer, initialH: MLTensor, initialC: MLTensor? = nil) -> RecurrentOutputs {
        let p = layer.parameters
        let isLSTM = p.cell.stateCount == 2
        let batch = rank == 3 ? shape[1] : 0
        let width = p.outputWidth
        func placeholders() -> RecurrentOutputs {
            let state = MLTensor.placeholder(shape: [batch, width])
            return RecurrentOutputs(
                sequence: MLTensor.placeholder(shape: [1, batch, width]), finalH: state, finalC: isLSTM ? state : nil)
        }
        guard MLTensor.check(!isLSTM || initialC != nil, "[lstm] the initial cell state is missing") else {
            return placeholders()
        }
        var inputs = [self, initialH]
        if isLSTM, let initialC { inputs.append(initialC) }
        inputs.append(layer.packedWeights)
        let result = MLTensor(.recurrent(p), inputs)
        // A broken rule (recorded inside a shape-check scope) leaves a placeholder shaped like x.
        guard rank == 3, result.shape == p.outputShape(steps: shape[0], batch: batch) else { return placeholders() }
        let rowCount = result.shape[0]
        let stateRows = p.cell.stateCount
        func rows(_ start: Int, _ count: Int) -> MLTensor {
            MLTensor(
                .slice(starts: [start, 0, 0], steps: [1, 1, 1], counts: [count, result.shape[1], result.shape[2]]),
                [result])
        }
        let first = rowCount - stateRows
        let finalH = MLTensor(.reshape([result.shape[1], result.shape[2]]), [rows(first, 1)])
        let finalC = isLSTM ? MLTensor(.reshape([result.shape[1], result.shape[2]]), [rows(first + 1, 1)]) : nil
        let sequence = p.outputSequence ? rows(0, first) : rows(first, 1)
        return RecurrentOutputs(sequence: sequence, finalH: finalH, finalC: finalC)
    }
}
