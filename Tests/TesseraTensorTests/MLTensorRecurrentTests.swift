import Foundation
import TesseraKernels
import Testing
import _TesseraTestSupport

@testable import TesseraTensor

/// `MLTensor.recurrent(_:initialH:initialC:)`: the three results are the right views of the one
/// kernel node, and shapes that do not fit the layer are shape errors, not traps.
@Suite("MLTensor recurrent layer")
struct MLTensorRecurrentTests {
    static func layer(_ cell: RecurrentCell, _ direction: RecurrentDirection, sequence: Bool) throws -> (
        RecurrentLayer, [RecurrentDirectionWeights]
    ) {
        var random = SeededRandom(seed: 3)
        let p = RecurrentParameters(
            cell: cell, direction: direction, inputSize: 4, hiddenSize: 3, outputSequence: sequence)
        let weights = (0..<direction.count).map { _ in
            RecurrentDirectionWeights(
                input: random.floats(p.gateWidth * 4), recurrent: random.floats(p.gateWidth * 3),
                inputBias: random.floats(p.gateWidth))
        }
        return (try RecurrentLayer(p, weights: weights), weights)
    }

    @Test(
        "sequence, final h and final c are the kernel result's rows",
        arguments: [(true, RecurrentDirection.bidirectional), (false, .reverse), (true, .forward)])
    func views(_ sequence: Bool, _ direction: RecurrentDirection) throws {
        let (layer, weights) = try Self.layer(.lstm(LSTMCell()), direction, sequence: sequence)
        let p = layer.parameters
        var random = SeededRandom(seed: 5)
        let (t, b) = (5, 2)
        let x = random.floats(t * b * 4)
        let h0 = random.floats(b * p.outputWidth)
        let c0 = random.floats(b * p.outputWidth)
        let out = MLTensor(shape: [t, b, 4], scalars: x).recurrent(
            layer, initialH: MLTensor(shape: [b, p.outputWidth], scalars: h0),
            initialC: MLTensor(shape: [b, p.outputWidth], scalars: c0))
        let expected = naiveRecurrent(p, steps: t, batch: b, x: x, initialH: h0, initialC: c0, weights: weights)
        let rows = sequence ? t : 0
        let row = b * p.outputWidth
        #expect(out.sequence.shape == [sequence ? t : 1, b, p.outputWidth])
        #expect(out.finalH.shape == [b, p.outputWidth])
        let sequenceExpected =
            sequence ? Array(expected[0..<rows * row]) : Array(expected[rows * row..<(rows + 1) * row])
        #expect(firstMismatch(out.sequence.scalars(of: Float.self), sequenceExpected, rtol: 1e-4, atol: 1e-5) == nil)
        #expect(
            firstMismatch(
                out.finalH.scalars(of: Float.self), Array(expected[rows * row..<(rows + 1) * row]), rtol: 1e-4,
                atol: 1e-5) == nil)
        let finalC = try #require(out.finalC)
        #expect(
            firstMismatch(
                finalC.scalars(of: Float.self), Array(expected[(rows + 1) * row..<(rows + 2) * row]), rtol: 1e-4,
                atol: 1e-5) == nil)
    }

    @Test("a GRU has no cell state in its results")
    func gruOutputs() throws {
        let (layer, _) = try Self.layer(
            .gru(gate: .sigmoid, candidate: .tanh, resetAfter: true), .forward, sequence: true)
        let out = MLTensor(shape: [2, 1, 4], scalars: [Float](repeating: 0.5, count: 8)).recurrent(
            layer, initialH: MLTensor(shape: [1, 3], scalars: [Float](repeating: 0, count: 3)))
        #expect(out.finalC == nil)
        #expect(out.sequence.shape == [2, 1, 3])
    }

    @Test("operands that do not fit the layer throw the rule's message inside a shape-check scope")
    func shapeErrors() throws {
        let (layer, _) = try Self.layer(.lstm(LSTMCell()), .forward, sequence: true)
        let state = MLTensor(shape: [2, 3], scalars: [Float](repeating: 0, count: 6))
        func message(_ body: () -> Void) -> String? {
            do {
                try MLTensor.withShapeChecks { body() }
                return nil
            } catch let error as MLTensorShapeError {
                return error.message
            } catch {
                return "unexpected \(error)"
            }
        }
        let wrongInput = MLTensor(shape: [5, 2, 3], scalars: [Float](repeating: 0, count: 30))
        #expect(
            message { _ = wrongInput.recurrent(layer, initialH: state, initialC: state) }
                == "[lstm] x must be [T, B, 4], got [5, 2, 3]")
        let x = MLTensor(shape: [5, 2, 4], scalars: [Float](repeating: 0, count: 40))
        let wrongState = MLTensor(shape: [3, 3], scalars: [Float](repeating: 0, count: 9))
        #expect(
            message { _ = x.recurrent(layer, initialH: wrongState, initialC: state) }
                == "[lstm] initial state 1 must be [2, 3] for x [5, 2, 4], got [3, 3]")
        #expect(message { _ = x.recurrent(layer, initialH: state) } == "[lstm] the initial cell state is missing")
    }
}
