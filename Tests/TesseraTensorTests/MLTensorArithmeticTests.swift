import Testing
import _TesseraTestSupport

@testable import TesseraTensor

let arithmeticCases: [FixtureCase] = [
    FixtureCase("add_ff", "f_a", "f_b") { $0[0] + $0[1] },
    FixtureCase("sub_ff", "f_a", "f_b") { $0[0] - $0[1] },
    FixtureCase("mul_ff", "f_a", "f_b") { $0[0] * $0[1] },
    FixtureCase("div_ff", "f_a", "f_b") { $0[0] / $0[1] },
    FixtureCase("rem_ff", "f_a", "f_b") { $0[0] % $0[1] },
    FixtureCase("add_ff", "f_a", "f_b") {
        var x = $0[0]
        x += $0[1]
        return x
    },
    FixtureCase("sub_ff", "f_a", "f_b") {
        var x = $0[0]
        x -= $0[1]
        return x
    },
    FixtureCase("mul_ff", "f_a", "f_b") {
        var x = $0[0]
        x *= $0[1]
        return x
    },
    FixtureCase("div_ff", "f_a", "f_b") {
        var x = $0[0]
        x /= $0[1]
        return x
    },
    FixtureCase("rem_ff", "f_a", "f_b") {
        var x = $0[0]
        x %= $0[1]
        return x
    },
    FixtureCase("add_fscalar", "f_a") { $0[0] + 2.5 },
    FixtureCase("rsub_fscalar", "f_a") { Float(2.5) - $0[0] },
    FixtureCase("mul_fscalar", "f_a") { $0[0] * Float(3) },
    FixtureCase("rdiv_fscalar", "f_pos") { Float(1.5) / $0[0] },
    FixtureCase("rem_fscalar", "f_a") { $0[0] % Float(0.75) },
    FixtureCase("rrem_fscalar", "f_pos") { Float(5) % $0[0] },
    FixtureCase("neg_f", "f_a") { -$0[0] },
    FixtureCase("add_rank0", "f_s", "f_a") { $0[0] + $0[1] },
    FixtureCase("mul_rank0_rank0", "f_s") { $0[0] * $0[0] },
    FixtureCase("add_empty", "f_empty", "f_row3") { $0[0] + $0[1] },
    FixtureCase("add_hh", "h_a", "h_b") { $0[0] + $0[1] },
    FixtureCase("mul_hh", "h_a", "h_b") { $0[0] * $0[1] },
    FixtureCase("div_hscalar", "h_a") { $0[0] / Float16(2) },
    FixtureCase("add_ii", "i_a", "i_b") { $0[0] + $0[1] },
    FixtureCase("sub_ii", "i_a", "i_b") { $0[0] - $0[1] },
    FixtureCase("mul_ii", "i_a", "i_b") { $0[0] * $0[1] },
    FixtureCase("div_ii", "i_a", "i_b") { $0[0] / $0[1] },
    FixtureCase("rem_ii", "i_a", "i_b") { $0[0] % $0[1] },
    FixtureCase("neg_i", "i_a") { -$0[0] },
    FixtureCase("mul_iscalar", "i_a") { $0[0] * Int32(3) },
    FixtureCase("sub_iscalar_trunc", "i_a") { $0[0] - Float(2.9) },
    FixtureCase("add_i8_wrap", "i8_a") { $0[0] + $0[0] },
    FixtureCase("mul_i8scalar", "i8_a") { $0[0] * Int8(3) },
    FixtureCase("sub_u8_wrap", "u8_a", "u8_b") { $0[0] - $0[1] },
]

let comparisonCases: [FixtureCase] = [
    FixtureCase("eq_ff", "f_q", "f_q2") { $0[0] .== $0[1] },
    FixtureCase("ne_ff", "f_q", "f_q2") { $0[0] .!= $0[1] },
    FixtureCase("lt_ff", "f_q", "f_q2") { $0[0] .< $0[1] },
    FixtureCase("le_ff", "f_q", "f_q2") { $0[0] .<= $0[1] },
    FixtureCase("gt_ff", "f_q", "f_q2") { $0[0] .> $0[1] },
    FixtureCase("ge_ff", "f_q", "f_q2") { $0[0] .>= $0[1] },
    FixtureCase("eq_fscalar", "f_q") { $0[0] .== Float(1) },
    FixtureCase("lt_fscalar", "f_q") { $0[0] .< Float(1) },
    FixtureCase("ge_fscalar", "f_q") { $0[0] .>= Float(0) },
    FixtureCase("ne_fscalar", "f_q") { $0[0] .!= Float(0) },
    FixtureCase("gt_ii", "i_a", "i_b") { $0[0] .> $0[1] },
    FixtureCase("le_iscalar", "i_a") { $0[0] .<= Int32(2) },
    FixtureCase("le_hh", "h_a", "h_b") { $0[0] .<= $0[1] },
    FixtureCase("and_bb", "b_a", "b_b") { $0[0] .& $0[1] },
    FixtureCase("or_bb", "b_a", "b_b") { $0[0] .| $0[1] },
    FixtureCase("xor_bb", "b_a", "b_b") { $0[0] .^ $0[1] },
    FixtureCase("not_b", "b_a") { .!$0[0] },
    FixtureCase("eq_bb", "b_a", "b_b") { $0[0] .== $0[1] },
]

@Suite("MLTensor arithmetic and comparisons")
struct MLTensorArithmeticTests {
    @Test("arithmetic matches NumPy", arguments: arithmeticCases)
    func arithmetic(_ fixture: FixtureCase) async throws {
        try await checkFixture(fixture)
    }

    @Test("comparisons and logic match NumPy", arguments: comparisonCases)
    func comparisons(_ fixture: FixtureCase) async throws {
        try await checkFixture(fixture)
    }

    @Test("scalar operands become rank-0 constants of the tensor's type")
    func scalarOperands() async {
        let x = MLTensor([1, 2, 3] as [Float])
        let y = x * 2 + 1
        #expect(y.shape == [3])
        #expect(y.scalarType is Float.Type)
        #expect(await y.scalars(of: Float.self) == [3, 5, 7])
        let i = MLTensor([7, -7] as [Int32])
        #expect(await (i % Int32(3)).scalars(of: Int32.self) == [1, 2])
        #expect(await (Float(10) - x).scalars(of: Float.self) == [9, 8, 7])
    }

    @Test("a chain of element-wise operations with scalars runs as one fused group")
    func scalarChainFuses() {
        // 20 × 20 elements: above `MLTensor.smallFoldingLimit`, so the ops are not folded as built.
        let x = MLTensor(shape: [20, 20], scalars: (0..<400).map { Float($0) }, scalarType: Float.self)
        let y = ((x * 0.5 - 1) / 3).clamped(to: 0...1)
        let stats = MLTensor.materialize([y])
        #expect(stats.fusedGroups == 1)
        #expect(stats.kernels == 1)
        #expect(stats.fusedNodes == 5)
    }

    @Test("multiplying by one, dividing by one and subtracting zero fold away when the graph is built")
    func identitiesFold() {
        let x = MLTensor(shape: [2, 3], scalars: [1, -2, 3, -0.0, .nan, .infinity] as [Float])
        let folded = [x * 1, 1 * x, x / 1, x - 0, x + (-0.0), x * Float(1), x.pow(1)]
        let stats = MLTensor.materialize(folded)
        #expect(stats.kernels == 0, "\(stats)")
        let expected = x.scalars(of: Float.self).map(\.bitPattern)
        for y in folded {
            #expect(y.shape == [2, 3])
            #expect(y.scalars(of: Float.self).map(\.bitPattern) == expected)
        }
        // `-0 + 0` is `+0`, so adding zero to a float tensor is computed, not folded.
        let sum = x + 0
        #expect(sum.scalars(of: Float.self)[3].bitPattern == Float(0).bitPattern)
        // Integers fold `+ 0` too; a scalar on the left broadcasts to the tensor's shape.
        let i = MLTensor([4, 5] as [Int32])
        #expect(MLTensor.materialize([i + 0, 0 + i]).kernels == 0)
        #expect((MLTensor(Float(1)) * x).shape == [2, 3])
    }
}
