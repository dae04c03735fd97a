import Testing
import _TesseraTestSupport

@testable import TesseraTensor

let mathCases: [FixtureCase] = [
    FixtureCase("math_abs", "f_a") { $0[0].abs() },
    FixtureCase("math_sign", "f_a") { $0[0].sign() },
    FixtureCase("math_ceil", "f_a") { $0[0].ceil() },
    FixtureCase("math_floor", "f_a") { $0[0].floor() },
    FixtureCase("math_round", "f_round") { $0[0].round() },
    FixtureCase("math_exp", "f_a") { $0[0].exp() },
    FixtureCase("math_exp2", "f_a") { $0[0].exp2() },
    FixtureCase("math_log", "f_pos") { $0[0].log() },
    FixtureCase("math_squareRoot", "f_pos") { $0[0].squareRoot() },
    FixtureCase("math_rsqrt", "f_pos") { $0[0].rsqrt() },
    FixtureCase("math_squared", "f_a") { $0[0].squared() },
    FixtureCase("math_reciprocal", "f_pos") { $0[0].reciprocal() },
    FixtureCase("math_sin", "f_a") { $0[0].sin() },
    FixtureCase("math_cos", "f_a") { $0[0].cos() },
    FixtureCase("math_tan", "f_unit") { $0[0].tan() },
    FixtureCase("math_asin", "f_unit") { $0[0].asin() },
    FixtureCase("math_acos", "f_unit") { $0[0].acos() },
    FixtureCase("math_atan", "f_a") { $0[0].atan() },
    FixtureCase("math_sinh", "f_a") { $0[0].sinh() },
    FixtureCase("math_cosh", "f_a") { $0[0].cosh() },
    FixtureCase("math_tanh", "f_a") { $0[0].tanh() },
    FixtureCase("math_asinh", "f_a") { $0[0].asinh() },
    FixtureCase("math_acosh", "f_ge1") { $0[0].acosh() },
    FixtureCase("math_atanh", "f_unit") { $0[0].atanh() },
    FixtureCase("math_h_exp", "h_a") { $0[0].exp() },
    FixtureCase("math_h_tanh", "h_a") { $0[0].tanh() },
    FixtureCase("math_h_abs", "h_a") { $0[0].abs() },
    FixtureCase("math_i_abs", "i_a") { $0[0].abs() },
    FixtureCase("math_i_sign", "i_a") { $0[0].sign() },
    FixtureCase("math_i_squared", "i_a") { $0[0].squared() },
    FixtureCase("math_i_floor", "i_a") { $0[0].floor().ceil().round() },
    FixtureCase("pow_ff", "f_pos", "f_exp") { $0[0].pow($0[1]) },
    FixtureCase("pow_fscalar", "f_pos") { $0[0].pow(Float(2)) },
    FixtureCase("pow_iscalar", "i_a") { $0[0].pow(Int32(2)) },
    FixtureCase("clamp_closed", "f_a") { $0[0].clamped(to: -0.5...0.5) },
    FixtureCase("clamp_from", "f_a") { $0[0].clamped(to: 0...) },
    FixtureCase("clamp_through", "f_a") { $0[0].clamped(to: ...0.25) },
    FixtureCase("clamp_i", "i_a") { $0[0].clamped(to: -3...3) },
    FixtureCase("min_ff", "f_a", "f_b") { pointwiseMin($0[0], $0[1]) },
    FixtureCase("max_ff", "f_a", "f_b") { pointwiseMax($0[0], $0[1]) },
    FixtureCase("max_ii", "i_a", "i_b") { pointwiseMax($0[0], $0[1]) },
    FixtureCase("cast_f_i32", "f_a") { ($0[0] * Float(4)).cast(to: Int32.self) },
    FixtureCase("cast_i_f", "i_a") { $0[0].cast(to: Float.self) },
    FixtureCase("cast_f_h", "f_a") { $0[0].cast(to: Float16.self) },
    FixtureCase("cast_f_b", "f_q") { $0[0].cast(to: Bool.self) },
    FixtureCase("cast_b_f", "b_a") { $0[0].cast(to: Float.self) },
    FixtureCase("cast_f_u8", "f_pos") { ($0[0] * Float(50)).cast(to: UInt8.self) },
    FixtureCase("cast_like_i8", "i_a", "i8_a") { $0[0].cast(like: $0[1]) },
]

@Suite("MLTensor element-wise math")
struct MLTensorMathTests {
    @Test("element-wise functions, pow, clamping, min/max and casts match NumPy", arguments: mathCases)
    func math(_ fixture: FixtureCase) async throws {
        try await checkFixture(fixture)
    }

    @Test("clamping keeps NaN and the scalar type")
    func clampKeepsNaN() async {
        let x = MLTensor([-2, .nan, 2] as [Float]).clamped(to: -1...1)
        let values = await x.scalars(of: Float.self)
        #expect(values[0] == -1 && values[1].isNaN && values[2] == 1)
        #expect(x.scalarType is Float.Type)
    }
}
