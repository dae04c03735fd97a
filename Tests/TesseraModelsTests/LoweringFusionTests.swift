import Foundation
import TesseraTensor
import Testing

@testable import TesseraModels

/// The lowering writes activations in the form the planner fuses into a convolution's
/// epilogue, so lowered models keep the fast path (structural, not numeric).
@Suite("Lowering: activations after a convolution fuse into its epilogue")
struct LoweringFusionTests {
    typealias P = HandBuiltProgram

    @Test("conv then relu, relu6 or clip runs as one convolution step", arguments: ["relu", "relu6", "clip"])
    func activationFuses(_ activation: String) throws {
        var operations = [
            P.floats("w", shape: [3, 2, 3, 3], (0..<54).map { Float($0 % 7) * 0.1 - 0.3 }),
            P.string("pad_type", "valid"),
            P.op("conv", "c", [("x", "x"), ("weight", "w"), ("pad_type", "pad_type")], outputRanks: [4]),
        ]
        var inputs = [("x", "c")]
        if activation == "clip" {
            operations += [P.floats("lo", shape: [], [-0.5]), P.floats("hi", shape: [], [0.5])]
            inputs += [("alpha", "lo"), ("beta", "hi")]
        }
        operations.append(P.op(activation, "y", inputs, outputRanks: [4]))
        let function = try HandBuiltProgram(inputs: [("x", [1, 2, 6, 6])], operations: operations, outputs: ["y"])
            .lowered()
        let x = MLTensor(shape: [1, 2, 6, 6], scalars: (0..<72).map { Float($0 % 11) * 0.2 - 1 })
        let y = try #require(try function.run(["x": x])["y"])
        let statistics = MLTensor.materialize([y])
        #expect(statistics.convEpilogues == 1, "\(statistics)")
        #expect(statistics.steps == 1, "\(statistics)")
    }

    @Test(
        "linear then gelu (both modes) or silu runs as one matmul step",
        arguments: ["gelu EXACT", "gelu TANH_APPROXIMATION", "silu"])
    func linearActivationFuses(_ activation: String) throws {
        let parts = activation.split(separator: " ").map(String.init)
        var operations = [
            P.floats("w", shape: [20, 8], (0..<160).map { Float($0 % 7) * 0.1 - 0.3 }),
            P.floats("b", shape: [20], (0..<20).map { Float($0 % 5) * 0.1 - 0.2 }),
            P.op("linear", "h", [("x", "x"), ("weight", "w"), ("bias", "b")], outputRanks: [3]),
        ]
        var inputs = [("x", "h")]
        if parts.count == 2 {
            operations.append(P.string("mode", parts[1]))
            inputs.append(("mode", "mode"))
        }
        operations.append(P.op(parts[0], "y", inputs, outputRanks: [3]))
        let function = try HandBuiltProgram(inputs: [("x", [1, 5, 8])], operations: operations, outputs: ["y"])
            .lowered()
        let x = MLTensor(shape: [1, 5, 8], scalars: (0..<40).map { Float($0 % 11) * 0.2 - 1 })
        let y = try #require(try function.run(["x": x])["y"])
        let statistics = MLTensor.materialize([y])
        #expect(statistics.convEpilogues == 1, "\(statistics)")
        // One kernel: the product with its bias and activation (the weight's transpose is a view).
        #expect(statistics.kernels == 1 && statistics.fusedGroups == 0, "\(statistics)")
    }
}
