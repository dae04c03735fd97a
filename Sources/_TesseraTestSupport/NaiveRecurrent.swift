import Foundation
import TesseraKernels

/// A recurrent layer computed the slow, obvious way — in `Double`, one dot product per gate
/// and unit, from the unpacked weights — for testing ``RecurrentKernels`` against.
///
/// Same contract as ``RecurrentKernels/run(_:steps:batch:x:initialH:initialC:weights:output:)``:
/// `x [T, B, I]`, states `[B, D·H]`, the result `[S + states, B, D·H]` row-major.
package func naiveRecurrent(
    _ p: RecurrentParameters, steps: Int, batch: Int, x: [Float], initialH: [Float], initialC: [Float]?,
    weights: [RecurrentDirectionWeights]
) -> [Float] {
    let (h, inputSize, width) = (p.hiddenSize, p.inputSize, p.outputWidth)
    let shape = p.outputShape(steps: steps, batch: batch)
    var out = [Float](repeating: 0, count: shape.reduce(1, *))
    let sequenceRows = p.outputSequence ? steps : 0
    func act(_ a: RecurrentActivation, _ v: Double) -> Double {
        switch a {
        case .sigmoid: return 1 / (1 + Foundation.exp(-v))
        case .tanh: return Foundation.tanh(v)
        case .relu: return Swift.max(v, 0)
        case .linear(let alpha, let beta): return Double(alpha) * v + Double(beta)
        case .scaledTanh(let alpha, let beta): return Double(alpha) * Foundation.tanh(Double(beta) * v)
        case .sigmoidHard(let alpha, let beta): return Swift.min(Swift.max(Double(alpha) * v + Double(beta), 0), 1)
        }
    }
    for (d, w) in weights.enumerated() {
        let backward = p.direction == .reverse || d == 1
        for item in 0..<batch {
            var hState = (0..<h).map { Double(initialH[item * width + d * h + $0]) }
            var cState = (0..<h).map { Double(initialC?[item * width + d * h + $0] ?? 0) }
            for k in 0..<steps {
                let t = backward ? steps - 1 - k : k
                let xt = (0..<inputSize).map { Double(x[(t * batch + item) * inputSize + $0]) }
                // Gate row g's input projection (with its input bias) and hidden projection of `state`.
                func inputPart(_ g: Int) -> Double {
                    var s = Double(w.inputBias?[g] ?? 0)
                    for i in 0..<inputSize { s += Double(w.input[g * inputSize + i]) * xt[i] }
                    return s
                }
                func hiddenPart(_ g: Int, _ state: [Double]) -> Double {
                    var s = Double(w.hiddenBias?[g] ?? 0)
                    for i in 0..<h { s += Double(w.recurrent[g * h + i]) * state[i] }
                    return s
                }
                var next = hState
                switch p.cell {
                case .rnn(let activation):
                    for j in 0..<h { next[j] = act(activation, inputPart(j) + hiddenPart(j, hState)) }
                case .gru(let gate, let candidate, let resetAfter):
                    let r = (0..<h).map { act(gate, inputPart($0) + hiddenPart($0, hState)) }
                    let z = (0..<h).map { act(gate, inputPart(h + $0) + hiddenPart(h + $0, hState)) }
                    let resetState = (0..<h).map { r[$0] * hState[$0] }
                    for j in 0..<h {
                        let o =
                            resetAfter
                            ? act(candidate, inputPart(2 * h + j) + r[j] * hiddenPart(2 * h + j, hState))
                            : act(candidate, inputPart(2 * h + j) + hiddenPart(2 * h + j, resetState))
                        next[j] = (1 - z[j]) * o + z[j] * hState[j]
                    }
                case .lstm(let cell):
                    let peep = { (g: Int) in Double(w.peephole?[g] ?? 0) }
                    var c = cState
                    for j in 0..<h {
                        let i = act(cell.gate, inputPart(j) + hiddenPart(j, hState) + peep(j) * cState[j])
                        let f =
                            cell.coupledInputForget
                            ? 1 - i
                            : act(cell.gate, inputPart(h + j) + hiddenPart(h + j, hState) + peep(h + j) * cState[j])
                        let g = act(cell.cell, inputPart(3 * h + j) + hiddenPart(3 * h + j, hState))
                        c[j] = f * cState[j] + i * g
                        if let clip = cell.clip { c[j] = Swift.min(Swift.max(c[j], -Double(clip)), Double(clip)) }
                        let o = act(
                            cell.gate, inputPart(2 * h + j) + hiddenPart(2 * h + j, hState) + peep(2 * h + j) * c[j])
                        next[j] = o * act(cell.output, c[j])
                    }
                    cState = c
                }
                hState = next
                if p.outputSequence {
                    let row = p.direction == .reverse && !p.reverseOutputInInputOrder ? k : t
                    for j in 0..<h { out[(row * batch + item) * width + d * h + j] = Float(hState[j]) }
                }
            }
            for j in 0..<h {
                out[(sequenceRows * batch + item) * width + d * h + j] = Float(hState[j])
                if p.cell.stateCount == 2 {
                    out[((sequenceRows + 1) * batch + item) * width + d * h + j] = Float(cState[j])
                }
            }
        }
    }
    return out
}
