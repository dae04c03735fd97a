import Foundation
import TesseraProtobuf
import TesseraTensor
import Testing
import _TesseraTestSupport

@testable import TesseraModels

/// A hand-written attention (`matmul` → scale → mask → `softmax` → `matmul`) lowers to one
/// fused step; the chain stays as written when an intermediate is read elsewhere.
@Suite("Lowering: hand-written attention becomes one fused step")
struct AttentionChainTests {
    typealias P = HandBuiltProgram

    /// A `const` of bool `value`, a scalar (`transpose_y`).
    static func bool(_ name: String, _ value: Bool) -> SpecBuilder.Body {
        SpecBuilder.operation(
            "const", name: name, outputs: [(name, SpecBuilder.tensorValueType(1, []))],
            attributes: [
                (
                    "val",
                    SpecBuilder.immediateTensor(type: SpecBuilder.tensorValueType(1, []), field: 3) {
                        $0.writePackedVarints([value ? 1 : 0], field: 1)
                    }
                )
            ])
    }

    /// `softmax(q · kᵀ / 2 + mask) · v` on `[2, 5, 4]` queries, `[2, 7, 4]` keys and `[2, 7, 3]`
    /// values with a `[7]` mask; `alsoOutput` makes the softmax's result a function output too.
    static func program(alsoOutput: Bool) -> HandBuiltProgram {
        HandBuiltProgram(
            inputs: [("q", [2, 5, 4]), ("k", [2, 7, 4]), ("v", [2, 7, 3]), ("mask", [7])],
            operations: [
                bool("t", true), bool("f", false), P.floats("two", shape: [], [2]), P.ints("axis", [-1], scalar: true),
                P.op(
                    "matmul", "scores", [("x", "q"), ("y", "k"), ("transpose_x", "f"), ("transpose_y", "t")],
                    outputRanks: [3]),
                P.op("real_div", "scaled", [("x", "scores"), ("y", "two")], outputRanks: [3]),
                P.op("add", "masked", [("x", "scaled"), ("y", "mask")], outputRanks: [3]),
                P.op("softmax", "weights", [("x", "masked"), ("axis", "axis")], outputRanks: [3]),
                P.op("matmul", "out", [("x", "weights"), ("y", "v")], outputRanks: [3]),
            ], outputs: alsoOutput ? ["out", "weights"] : ["out"])
    }

    @Test("the chain runs as one attention step and matches the naive attention")
    func fuses() throws {
        let function = try Self.program(alsoOutput: false).lowered()
        #expect(function.steps.map(\.type) == ["scaled_dot_product_attention"])
        var rng = SeededRandom(seed: 11)
        let (q, k, v) = (rng.floats(40, in: -2...2), rng.floats(56, in: -2...2), rng.floats(42))
        var mask = rng.floats(7)
        mask[3] = -.infinity
        let outputs = try function.run([
            "q": MLTensor(shape: [2, 5, 4], scalars: q), "k": MLTensor(shape: [2, 7, 4], scalars: k),
            "v": MLTensor(shape: [2, 7, 3], scalars: v), "mask": MLTensor(shape: [7], scalars: mask),
        ])
        let out = try #require(outputs["out"])
        _ = MLTensor.materialize([out])
        let want = NaiveAttention.attention(
            q: q, k: k, v: v, mask: (0..<70).map { mask[$0 % 7] }, heads: 2, l: 5, s: 7, e: 4, ev: 3, scale: 0.5)
        let got = out.scalars(of: Float.self).map(Double.init)
        #expect(out.shape == [2, 5, 3])
        #expect(firstMismatch(got, want, rtol: 1e-5, atol: 1e-6) == nil)
    }

    @Test("an intermediate read elsewhere (here a function output) keeps the ops as written")
    func intermediateUsedElsewhere() throws {
        let function = try Self.program(alsoOutput: true).lowered()
        #expect(function.steps.map(\.type) == ["matmul", "real_div", "add", "softmax", "matmul"])
    }

    @Test("the transformer block fixture's attention is one step and its output matches NumPy's")
    func transformerBlock() throws {
        let fixture = try #require(LoweringFixture.named("transformer_block"))
        let function = try LoweredFunction(package: try fixture.package(), functionName: "main")
        #expect(function.steps.filter { $0.type == "scaled_dot_product_attention" }.count == 1)
        #expect(!function.steps.contains { $0.type == "softmax" })
        let outputs = try function.run(try fixture.inputTensors())
        let y = try #require(outputs[fixture.outputs[0]])
        _ = MLTensor.materialize([y])
        #expect(
            firstMismatch(
                y.scalars(of: Float.self), try fixture.expected(0).floats, rtol: fixture.rtol, atol: fixture.atol)
                == nil)
    }
}
