import Testing
import _TesseraTestSupport

@testable import TesseraModels

/// `lstm`, `gru`, `rnn` on the programs `tools/make_recurrent_fixtures.py` writes: PyTorch's
/// nn.LSTM / nn.RNN converted by coremltools (expected values from PyTorch) and MIL-builder
/// programs with NumPy references (peephole, clip, activations, directions, iOS 18 `reset_after`).
@Suite("recurrent ops")
struct RecurrentFixtureTests {
    static let all = LoweringFixture.load("recurrent")

    @Test(
        "PyTorch LSTM and RNN layers converted by coremltools match PyTorch",
        arguments: all.filter { $0.name.hasPrefix("torch_") && !$0.ops.contains("while_loop") })
    func matchesPyTorch(_ fixture: LoweringFixture) throws {
        try fixture.check()
    }

    @Test(
        "MIL-builder lstm, gru and rnn programs match NumPy (and iOS 18 gru nn.GRU)",
        arguments: all.filter { $0.name.hasPrefix("mil_") })
    func matchesNumPy(_ fixture: LoweringFixture) throws {
        try fixture.check()
    }

    @Test(
        "PyTorch GRUs (which coremltools converts to a while_loop) match PyTorch, or are refused naming while_loop",
        arguments: all.filter { $0.ops.contains("while_loop") })
    func pyTorchGRU(_ fixture: LoweringFixture) throws {
        do {
            _ = try fixture.function()
        } catch let error as ModelFormatError where error.kind == .unsupportedModelType {
            #expect(error.message.contains("while_loop"), "\(error.message)")
            return
        }
        try fixture.check()
    }

    @Test("the compute plan weighs a recurrent layer by its products: the two lstm ops outweigh the rest")
    func computePlanCost() async throws {
        let url = Fixtures.url("recurrent/torch_lstm_two_layers/model.mlpackage")
        let plan = try await MLComputePlan.load(contentsOf: url, configuration: MLModelConfiguration())
        guard case .program(let program) = plan.modelStructure, let main = program.functions["main"] else {
            Issue.record("no main function")
            return
        }
        let weighted = main.block.operations.map { ($0.operatorName, plan.estimatedCost(of: $0)?.weight ?? 0) }
        let lstm = weighted.filter { $0.0 == "lstm" }.map(\.1)
        #expect(lstm.count == 2)
        // 6 steps × 2 items × (2 · 16·5 + 2 · 16·4 + 10 · 16) FLOPs each, the rest moves a few hundred floats.
        #expect(lstm.reduce(0, +) > 0.6, "\(weighted)")
    }

    @Test("the fixtures cover every recurrent op, direction and the PyTorch layouts")
    func coverage() {
        let ops = Set(Self.all.flatMap(\.ops))
        #expect(ops.isSuperset(of: ["lstm", "gru", "rnn"]))
        let names = Set(Self.all.map(\.name))
        for name in [
            "mil_lstm_bidirectional_seq", "mil_lstm_reverse_seq", "mil_lstm_peephole_clip", "mil_gru_reverse_seq",
            "mil_rnn_reverse_relu", "mil_gru_reset_after_torch", "torch_lstm_bidirectional_two_layers_batch_first",
            "torch_rnn_relu_two_layers",
        ] {
            #expect(names.contains(name), "missing \(name)")
        }
    }
}
