import Foundation
import TesseraTensor
import Testing

@testable import TesseraModels

/// Recurrent ops a model writes wrongly fail the load (or the prediction) with a message
/// naming the operation, never a trap.
@Suite("recurrent ops: load and shape errors")
struct RecurrentLoadErrorTests {
    typealias P = HandBuiltProgram

    /// An `rnn` (H = 2, I = 3) over `x`, with `extra` constants appended and bound.
    static func rnn(
        x: [Int?] = [4, 1, 3], weightHH: [Int] = [2, 2], extra: [(String, P.B.Body)] = []
    ) -> HandBuiltProgram {
        var operations = [
            P.floats("w_ih", shape: [2, 3], [Float](repeating: 0.1, count: 6)),
            P.floats("w_hh", shape: weightHH, [Float](repeating: 0.2, count: weightHH.reduce(1, *))),
            P.floats("h0", shape: [1, 2], [0, 0]),
        ]
        operations += extra.map(\.1)
        let bindings =
            [("x", "x"), ("initial_h", "h0"), ("weight_ih", "w_ih"), ("weight_hh", "w_hh")]
            + extra.map { ($0.0, $0.0) }
        operations.append(P.op("rnn", "y", bindings, outputRanks: [3, 2]))
        return HandBuiltProgram(inputs: [("x", x)], operations: operations, outputs: ["y"])
    }

    /// The load error of `program`, or `nil` when it loads.
    static func loadError(_ program: HandBuiltProgram) -> ModelFormatError? {
        do {
            _ = try program.lowered()
            return nil
        } catch let error as ModelFormatError {
            return error
        } catch {
            Issue.record("unexpected \(error)")
            return nil
        }
    }

    @Test("a well-formed hand-built rnn loads and runs")
    func wellFormed() throws {
        let function = try Self.rnn().lowered()
        let x = MLTensor(shape: [4, 1, 3], scalars: [Float](repeating: 1, count: 12))
        let y = try #require(try function.run(["x": x])["y"])
        #expect(y.shape == [1, 1, 2])
        // Every weight is 0.1 or 0.2 and x is ones: h_t = tanh(0.3 + 0.4 h_{t-1}) from h_0 = 0.
        let expected = [1, 2, 3, 4].reduce(0.0) { h, _ in Foundation.tanh(0.3 + 0.4 * h) }
        for value in y.scalars(of: Float.self) { #expect(Swift.abs(Double(value) - expected) < 1e-6) }
    }

    @Test("an unknown activation fails the load, naming the op and the name")
    func unknownActivation() throws {
        let error = try #require(Self.loadError(Self.rnn(extra: [("activation", P.string("activation", "softplus"))])))
        #expect(error.kind == .invalidSpecification)
        #expect(error.message.contains("'y'") && error.message.contains("activation 'softplus'"), "\(error.message)")
    }

    @Test("a bidirectional rnn fails the load")
    func bidirectionalRNN() throws {
        let error = try #require(
            Self.loadError(Self.rnn(extra: [("direction", P.string("direction", "bidirectional"))])))
        #expect(error.message.contains("direction 'bidirectional'"), "\(error.message)")
    }

    @Test("weights of the wrong shape fail the load, with both shapes")
    func wrongWeights() throws {
        let error = try #require(Self.loadError(Self.rnn(weightHH: [3, 2])))
        #expect(error.kind == .invalidSpecification)
        #expect(error.message.contains("[2, 3]") && error.message.contains("[3, 2]"), "\(error.message)")
    }

    @Test("an input size the weights do not take throws a shape mismatch naming the op")
    func wrongInputSize() throws {
        let function = try Self.rnn(x: [nil, nil, nil]).lowered()
        let x = MLTensor(shape: [4, 1, 5], scalars: [Float](repeating: 1, count: 20))
        #expect {
            try function.run(["x": x])
        } throws: { error in
            guard let error = error as? LoweringError else { return false }
            return error.kind == .shapeMismatch && error.message.contains("[rnn] x must be [T, B, 3], got [4, 1, 5]")
        }
    }
}
