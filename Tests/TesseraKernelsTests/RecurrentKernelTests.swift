import Foundation
import TesseraKernels
import Testing
import _TesseraTestSupport

/// ``RecurrentKernels`` (GEMM projections and fused gates over packed weights) against the
/// naive per-unit reference in `_TesseraTestSupport`, over every cell, direction and the tails
/// of the sixteen-lane gate loops.
@Suite("recurrent kernels")
struct RecurrentKernelTests {
    /// One configuration: the layer and the run's sizes.
    struct Case: CustomTestStringConvertible, Sendable {
        var parameters: RecurrentParameters
        var steps: Int
        var batch: Int
        var label: String
        /// The kernel's input-projection budget (small to exercise blocks of steps).
        var maximumProjection = RecurrentKernels.projectionBudget
        var testDescription: String { label }
    }

    static let lstmCells: [(String, LSTMCell)] = [
        ("default", LSTMCell()),
        ("peephole clip", LSTMCell(clip: 0.25, hasPeephole: true)),
        (
            "hard sigmoid relu scaled tanh coupled",
            LSTMCell(
                gate: .sigmoidHard(alpha: 0.2, beta: 0.5), cell: .relu, output: .scaledTanh(alpha: 1.5, beta: 0.7),
                hasPeephole: true, coupledInputForget: true)
        ),
        ("linear", LSTMCell(gate: .tanh, cell: .linear(alpha: 0.5, beta: 0.1), output: .sigmoid, clip: 3)),
    ]

    static let cells: [(String, RecurrentCell)] =
        [
            ("rnn tanh", .rnn(activation: .tanh)),
            ("rnn relu", .rnn(activation: .relu)),
            ("gru", .gru(gate: .sigmoid, candidate: .tanh, resetAfter: false)),
            ("gru reset after", .gru(gate: .sigmoid, candidate: .tanh, resetAfter: true)),
            ("gru hard sigmoid", .gru(gate: .sigmoidHard(alpha: 0.2, beta: 0.5), candidate: .relu, resetAfter: false)),
        ] + lstmCells.map { ("lstm \($0.0)", RecurrentCell.lstm($0.1)) }

    static let cases: [Case] = {
        var cases: [Case] = []
        let sizes: [(steps: Int, batch: Int, input: Int, hidden: Int)] = [(7, 3, 5, 20), (1, 1, 1, 1), (4, 17, 3, 16)]
        for (name, cell) in cells {
            for direction in [RecurrentDirection.forward, .reverse, .bidirectional] {
                for (index, size) in sizes.enumerated() {
                    let sequence = index != 1
                    cases.append(
                        Case(
                            parameters: RecurrentParameters(
                                cell: cell, direction: direction, inputSize: size.input, hiddenSize: size.hidden,
                                outputSequence: sequence),
                            steps: size.steps, batch: size.batch,
                            label: "\(name) \(direction) T\(size.steps) B\(size.batch) H\(size.hidden)"))
                }
            }
        }
        var inputOrder = RecurrentParameters(
            cell: .lstm(LSTMCell()), direction: .reverse, inputSize: 4, hiddenSize: 5, outputSequence: true,
            reverseOutputInInputOrder: true)
        cases.append(Case(parameters: inputOrder, steps: 6, batch: 2, label: "lstm reverse in input order"))
        for (name, cell) in cells where name.hasPrefix("lstm peephole") || name == "gru" {
            for direction in [RecurrentDirection.forward, .bidirectional] {
                var blocks = Case(
                    parameters: RecurrentParameters(
                        cell: cell, direction: direction, inputSize: 3, hiddenSize: 4, outputSequence: true),
                    steps: 7, batch: 2, label: "\(name) \(direction) in blocks of 3 steps")
                blocks.maximumProjection = 3 * 2 * cell.gateCount * 4 + 5
                cases.append(blocks)
            }
        }
        inputOrder.cell = .rnn(activation: .sigmoid)
        cases.append(Case(parameters: inputOrder, steps: 0, batch: 2, label: "rnn empty sequence"))
        return cases
    }()

    /// Random weights for `p` (biases and peepholes present).
    static func weights(_ p: RecurrentParameters, _ random: inout SeededRandom) -> [RecurrentDirectionWeights] {
        let (width, h) = (p.gateWidth, p.hiddenSize)
        return (0..<p.direction.count).map { _ in
            var peephole: [Float]?
            if case .lstm(let cell) = p.cell, cell.hasPeephole { peephole = random.floats(3 * h) }
            return RecurrentDirectionWeights(
                input: random.floats(width * p.inputSize), recurrent: random.floats(width * h),
                inputBias: random.floats(width), hiddenBias: random.floats(width), peephole: peephole)
        }
    }

    @Test("the packed GEMM-and-fused-gate loop matches the naive reference", arguments: cases)
    func matchesNaiveReference(_ c: Case) throws {
        var random = SeededRandom(seed: UInt64(c.label.utf8.reduce(7) { $0 &* 31 &+ Int($1) }.magnitude))
        let p = c.parameters
        let weights = Self.weights(p, &random)
        let x = random.floats(c.steps * c.batch * p.inputSize, in: -2...2)
        let h0 = random.floats(c.batch * p.outputWidth)
        let c0 = random.floats(c.batch * p.outputWidth)
        let packed = try p.packWeights(weights)
        #expect(packed.count == p.packedCount)
        let shape = p.outputShape(steps: c.steps, batch: c.batch)
        var got = [Float](repeating: .nan, count: shape.reduce(1, *))
        x.withUnsafeBufferPointer { x in
            h0.withUnsafeBufferPointer { h0 in
                c0.withUnsafeBufferPointer { c0 in
                    packed.withUnsafeBufferPointer { w in
                        got.withUnsafeMutableBufferPointer { out in
                            RecurrentKernels.run(
                                p, steps: c.steps, batch: c.batch, x: x.baseAddress!, initialH: h0.baseAddress!,
                                initialC: c0.baseAddress!, weights: w.baseAddress!, output: out.baseAddress!,
                                maximumProjection: c.maximumProjection)
                        }
                    }
                }
            }
        }
        let expected = naiveRecurrent(
            p, steps: c.steps, batch: c.batch, x: x, initialH: h0, initialC: c0, weights: weights)
        let mismatch = firstMismatch(got, expected, rtol: 1e-4, atol: 1e-5)
        #expect(mismatch == nil, "\(c.label): \(mismatch ?? "")")
    }

    @Test("the vector activations match the C library within a few ulp")
    func activations() {
        var random = SeededRandom(seed: 11)
        let values = random.floats(4096, in: -12...12) + [0, -0, 1e-6, -1e-6, 0.6249, 0.625, -0.625, 40, -40, 100]
        for x in values {
            let t = RecurrentActivation.tanh.apply(x)
            #expect(
                Swift.abs(Double(t) - Foundation.tanh(Double(x))) <= 3e-7
                    * Swift.max(1e-30, Swift.abs(Foundation.tanh(Double(x)))) + 1e-45, "tanh(\(x)) = \(t)")
            let s = RecurrentActivation.sigmoid.apply(x)
            let expected = 1 / (1 + Foundation.exp(-Double(x)))
            #expect(Swift.abs(Double(s) - expected) <= 5e-7 * expected, "sigmoid(\(x)) = \(s)")
        }
        #expect(RecurrentActivation.sigmoidHard(alpha: 0.2, beta: 0.5).apply(-10) == 0)
        #expect(RecurrentActivation.sigmoidHard(alpha: 0.2, beta: 0.5).apply(1) == 0.7)
        #expect(RecurrentActivation.scaledTanh(alpha: 2, beta: 0.5).apply(1) == 2 * Float(Foundation.tanh(0.5)))
        #expect(RecurrentActivation.tanh.apply(Float.nan).isNaN)
    }

    @Test("MIL activation names map to their parameters; unknown names are refused")
    func milNames() {
        #expect(RecurrentActivation(milName: "SIGMOID") == .sigmoid)
        #expect(RecurrentActivation(milName: "scaled_tanh") == .scaledTanh(alpha: 1, beta: 1))
        #expect(RecurrentActivation(milName: "hard_sigmoid") == .sigmoidHard(alpha: 0.2, beta: 0.5))
        #expect(RecurrentActivation(milName: "sigmoid_hard") == .sigmoidHard(alpha: 0.2, beta: 0.5))
        #expect(RecurrentActivation(milName: "linear") == .linear(alpha: 1, beta: 0))
        #expect(RecurrentActivation(milName: "softsign") == nil)
    }

    @Test("packing refuses weights that do not fit, naming the cell and the shapes")
    func packingErrors() {
        let p = RecurrentParameters(
            cell: .gru(gate: .sigmoid, candidate: .tanh, resetAfter: false), direction: .bidirectional, inputSize: 2,
            hiddenSize: 3, outputSequence: false)
        let good = RecurrentDirectionWeights(
            input: .init(repeating: 0, count: 18), recurrent: .init(repeating: 0, count: 27))
        #expect(throws: OpError("[gru] bidirectional needs 2 sets of weights, got 1")) { try p.packWeights([good]) }
        var bad = good
        bad.recurrent.removeLast()
        #expect(throws: OpError("[gru] recurrent weights have 26 elements, expected [9, 3]")) {
            try p.packWeights([good, bad])
        }
        bad = good
        bad.peephole = [0, 0, 0]
        #expect(throws: OpError("[gru] peephole has 3 elements, expected [9] (LSTM only)")) {
            try p.packWeights([good, bad])
        }
        bad = good
        bad.inputBias = [1]
        #expect(throws: OpError("[gru] input bias has 1 elements, expected [9]")) { try p.packWeights([good, bad]) }
    }
}
