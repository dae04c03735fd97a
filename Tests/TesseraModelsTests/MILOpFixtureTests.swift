import Foundation
import TesseraTensor
import Testing
import _TesseraTestSupport

@testable import TesseraModels

/// The cases `tools/make_mil_op_fixtures.py` writes to `Tests/Fixtures/mil-ops/`: quantize and
/// dequantize, the iOS 18 sparse constexpr ops, slice_update, the random ops, control flow and
/// lists, and parameters computed at run time; expected values from NumPy.
@Suite("MIL ops of issue 21 against NumPy")
struct MILOpFixtureTests {
    static let all = LoweringFixture.load("mil-ops")
    /// The cases compared value by value.
    /// (The random samples are checked by their statistics, the fp16 case in both modes.)
    static let compared = all.filter { !["random_samples", "float16_rounding"].contains($0.name) }

    @Test("each case matches NumPy", arguments: compared)
    func matches(_ fixture: LoweringFixture) throws {
        try fixture.check()
    }

    @Test("the cases cover the new op types")
    func coverage() {
        let covered = Set(Self.all.flatMap(\.ops))
        let wanted: Set<String> = [
            "quantize", "dequantize", "constexpr_lut_to_sparse", "constexpr_sparse_blockwise_shift_scale",
            "constexpr_sparse_to_dense", "slice_update", "random_normal", "random_uniform", "random_bernoulli",
            "random_categorical", "cond", "while_loop", "make_list", "list_write", "list_read", "list_gather",
            "list_scatter", "list_length", "range_1d", "tile", "fill", "one_hot",
        ]
        #expect(wanted.subtracting(covered).isEmpty, "not covered: \(wanted.subtracting(covered).sorted())")
    }

    @Test("random samples have their distributions' mean and variance")
    func randomStatistics() throws {
        let fixture = try #require(Self.all.first { $0.name == "random_samples" })
        let function = try fixture.function()
        let outputs = try function.run(try fixture.inputTensors())
        let names = function.outputNames
        func statistics(_ index: Int) -> (mean: Double, variance: Double, values: [Float]) {
            let values = outputs[names[index]]!.scalars(of: Float.self)
            let mean = values.reduce(0.0) { $0 + Double($1) } / Double(values.count)
            let variance = values.reduce(0.0) { $0 + (Double($1) - mean) * (Double($1) - mean) } / Double(values.count)
            return (mean, variance, values)
        }
        // 20 000 samples: the mean's standard error is below 0.01 for each distribution.
        let normal = statistics(1)
        #expect(
            abs(normal.mean - 2) < 0.02 && abs(normal.variance - 0.25) < 0.02,
            "normal \(normal.mean) \(normal.variance)")
        let uniform = statistics(2)
        #expect(abs(uniform.mean - 1) < 0.05 && abs(uniform.variance - 16.0 / 12) < 0.05)
        #expect(uniform.values.allSatisfy { $0 >= -1 && $0 < 3 })
        let bernoulli = statistics(3)
        #expect(bernoulli.values.allSatisfy { $0 == 0 || $0 == 1 } && abs(bernoulli.mean - 0.3) < 0.02)
        let categorical = statistics(4).values
        for (label, probability) in [(0, 0.1), (1, 0.6), (2, 0.3)] {
            let share = Double(categorical.filter { $0 == Float(label) }.count) / Double(categorical.count)
            #expect(abs(share - probability) < 0.02, "class \(label): \(share)")
        }
    }

    @Test("a seeded random op gives the same values every prediction; an unseeded one does not")
    func seeds() throws {
        let fixture = try #require(Self.all.first { $0.name == "random_samples" })
        let function = try fixture.function()
        let names = function.outputNames
        let first = try function.run(try fixture.inputTensors())
        let second = try function.run(try fixture.inputTensors())
        for seeded in [1, 2, 4] {
            #expect(first[names[seeded]]!.scalars(of: Float.self) == second[names[seeded]]!.scalars(of: Float.self))
        }
        // random_bernoulli has no seed (−1): fresh values each time.
        #expect(first[names[3]]!.scalars(of: Float.self) != second[names[3]]!.scalars(of: Float.self))
    }

    @Test("fp8 bytes decode to PyTorch's values")
    func float8() throws {
        let table = try Fixtures.npy("mil-ops/fp8.npy")
        try #require(table.shape == [256, 2])
        for byte in 0..<256 {
            let (e4m3, e5m2) = (table.floats[2 * byte], table.floats[2 * byte + 1])
            let decoded = (
                ConstexprOperation.float8E4M3FN(UInt8(byte)), ConstexprOperation.float8E5M2(UInt8(byte))
            )
            #expect(e4m3.isNaN ? decoded.0.isNaN : decoded.0 == e4m3, "e4m3 byte \(byte)")
            #expect(e5m2.isNaN ? decoded.1.isNaN : decoded.1 == e5m2, "e5m2 byte \(byte)")
        }
    }

    @Test("fp16 values round to fp16 after each op when asked, and stay Float32 by default")
    func float16Rounding() throws {
        let fixture = try #require(Self.all.first { $0.name == "float16_rounding" })
        let package = try fixture.package()
        let inputs = try fixture.inputTensors()
        let rounded = try LoweredFunction(package: package, functionName: "main", float16Rounding: .roundedToFloat16)
        let exact = try LoweredFunction(package: package, functionName: "main")
        let output = fixture.outputs[0]
        let half = try #require(rounded.run(inputs)[output]).scalars(of: Float.self)
        let full = try #require(exact.run(inputs)[output]).scalars(of: Float.self)
        // NumPy's float16 arithmetic, bit for bit.
        #expect(half == (try fixture.expected(0)).floats)
        let reference = try Fixtures.npy("mil-ops/float16_rounding/expected_fp32.npy").floats
        #expect(firstMismatch(full, reference, rtol: 1e-5, atol: 1e-3) == nil)
        #expect(half != full)
    }
}
