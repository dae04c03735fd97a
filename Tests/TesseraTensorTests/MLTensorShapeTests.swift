import Testing
import _TesseraTestSupport

@testable import TesseraTensor

let shapeCases: [FixtureCase] = [
    FixtureCase("reshape_46", "f_a") { $0[0].reshaped(to: [4, 6]) },
    FixtureCase("flatten", "f_a") { $0[0].flattened() },
    FixtureCase("expand_0_2", "f_a") { $0[0].expandingShape(at: 0, 2) },
    FixtureCase("expand_m1", "f_a") { $0[0].expandingShape(at: [-1]) },
    FixtureCase("expand_rank0", "f_s") { $0[0].expandingShape(at: 0) },
    FixtureCase("squeeze_all", "f_sq") { $0[0].squeezingShape() },
    FixtureCase("squeeze_0", "f_sq") { $0[0].squeezingShape(at: 0) },
    FixtureCase("squeeze_m2_0", "f_sq") { $0[0].squeezingShape(at: [-2, 0]) },
    FixtureCase("transpose", "f_a") { $0[0].transposed() },
    FixtureCase("transpose_102", "f_a") { $0[0].transposed(permutation: 1, 0, 2) },
    FixtureCase("transpose_201", "f_a") { $0[0].transposed(permutation: [2, 0, -2]) },
    FixtureCase("transpose_b", "b_a") { $0[0].transposed() },
    FixtureCase("concat_with_m1", "f_a") { $0[0].concatenated(with: $0[0] * Float(0) + Float(1), alongAxis: -1) },
    FixtureCase("split_count_ax1", "f_a") { $0[0].split(count: 3, alongAxis: 1) },
    FixtureCase("split_sizes_axm1", "f_a") { $0[0].split(sizes: [1, 3], alongAxis: -1) },
    FixtureCase("split_sizes_zero", "f_row") { $0[0].split(sizes: [0, 3, 1]) },
    FixtureCase("unstack_ax1", "f_a") { $0[0].unstacked(alongAxis: 1) },
    FixtureCase("unstack_ax0_i", "i_a") { $0[0].unstacked() },
    FixtureCase("tile_fewer", "f_a") { $0[0].tiled(multiples: [2]) },
    FixtureCase("tile_promote", "f_a") { $0[0].tiled(multiples: [2, 1, 1, 2]) },
    FixtureCase("tile_vec", "f_row") { $0[0].tiled(multiples: [3, 2]) },
    FixtureCase("tile_b", "b_b") { $0[0].tiled(multiples: [2, 1]) },
    FixtureCase("reverse_0", "f_a") { $0[0].reversed(alongAxes: 0) },
    FixtureCase("reverse_0_m1", "f_a") { $0[0].reversed(alongAxes: [-1, 0]) },
    FixtureCase("reverse_h", "h_a") { $0[0].reversed(alongAxes: 1) },
    FixtureCase("reverse_empty", "f_e02") { $0[0].reversed(alongAxes: 0, 1) },
]

let combiningCases: [FixtureCase] = [
    FixtureCase("stack_ax0", "f_row") { MLTensor(stacking: [$0[0], $0[0] * Float(2)]) },
    FixtureCase("stack_ax0", "f_row") { MLTensor([$0[0], $0[0] * Float(2)]) },
    FixtureCase("stack_axm1", "f_row") { MLTensor(stacking: [$0[0], $0[0] * Float(2)], alongAxis: -1) },
    FixtureCase("stack_axm1", "f_row") { MLTensor([$0[0], $0[0] * Float(2)], alongAxis: 1) },
    FixtureCase("stack_ax1_three", "f_m23", "f_pos") { MLTensor(stacking: [$0[0], $0[1], $0[0]], alongAxis: 1) },
    FixtureCase("stack_i", "i_a") { MLTensor(stacking: [$0[0], $0[0]], alongAxis: 2) },
    FixtureCase("stack_rank0", "f_s") { MLTensor(stacking: [$0[0], $0[0]]) },
    FixtureCase("concat_ax0", "f_m23", "f_pos") { MLTensor(concatenating: [$0[0], $0[1], $0[0]]) },
    FixtureCase("concat_axm1", "f_m23", "f_pos") { MLTensor(concatenating: [$0[0], $0[1]], alongAxis: -1) },
    FixtureCase("concat_empty", "f_empty", "f_m23") { MLTensor(concatenating: [$0[0], $0[1]], alongAxis: 0) },
    FixtureCase("concat_b", "b_b") { MLTensor(concatenating: [$0[0], $0[0]]) },
    FixtureCase("range_f") { _ in MLTensor(rangeFrom: 0, to: 1, by: 0.25) },
    FixtureCase("range_f_neg") { _ in MLTensor(rangeFrom: -1, to: 1, by: 0.3) },
    FixtureCase("range_i") { _ in MLTensor(rangeFrom: Int32(0), to: 10, by: 3, scalarType: Int32.self) },
    FixtureCase("range_i_down") { _ in MLTensor(rangeFrom: Int32(10), to: 0, by: -3, scalarType: Int32.self) },
    FixtureCase("range_h") { _ in MLTensor(rangeFrom: Float16(0), to: 2, by: 0.5, scalarType: Float16.self) },
    FixtureCase("range_empty") { _ in MLTensor(rangeFrom: 1, to: 0, by: 1) },
    FixtureCase("linspace_f") { _ in MLTensor(linearSpaceFrom: 0, through: 1, count: 5) },
    FixtureCase("linspace_f7") { _ in MLTensor(linearSpaceFrom: -3, through: 7, count: 7) },
    FixtureCase("linspace_h") { _ in
        MLTensor(linearSpaceFrom: Float16(-1), through: 2, count: 4, scalarType: Float16.self)
    },
    FixtureCase("linspace_one") { _ in MLTensor(linearSpaceFrom: 2.5, through: 9, count: 1) },
]

@Suite("MLTensor shape manipulation, stacking and ranges")
struct MLTensorShapeTests {
    @Test("shape operations match NumPy", arguments: shapeCases)
    func shapes(_ fixture: FixtureCase) async throws {
        try await checkFixture(fixture)
    }

    @Test("stacking, concatenation and ranges match NumPy", arguments: combiningCases)
    func combining(_ fixture: FixtureCase) async throws {
        try await checkFixture(fixture)
    }

    @Test("documented shapes")
    func documentedShapes() {
        let x = MLTensor(zeros: [5, 30], scalarType: Float.self)
        #expect(x.split(count: 3, alongAxis: 1).map(\.shape) == [[5, 10], [5, 10], [5, 10]])
        #expect(x.split(sizes: [4, 15, 11], alongAxis: 1).map(\.shape) == [[5, 4], [5, 15], [5, 11]])
        let abc = MLTensor(zeros: [2, 3, 4], scalarType: Float.self)
        #expect(MLTensor(stacking: [abc, abc, abc], alongAxis: 1).shape == [2, 3, 3, 4])
        #expect(MLTensor(stacking: [abc, abc], alongAxis: -4).shape == [2, 2, 3, 4])
        #expect(MLTensor(zeros: [1, 2, 1], scalarType: Float.self).squeezingShape(at: 0).shape == [2, 1])
        #expect(MLTensor(zeros: [2], scalarType: Float.self).expandingShape(at: 0).shape == [1, 2])
        #expect(
            MLTensor(zeros: [1, 2, 3], scalarType: Float.self).transposed(permutation: [1, 0, 2]).shape == [2, 1, 3])
    }

    @Test("reshapes, transposes, slices and reversals are views")
    func viewsRunNoKernel() {
        let x = MLTensor(shape: [2, 3], scalars: [1, 2, 3, 4, 5, 6]).materialized()
        let stats = MLTensor.materialize([
            x.transposed(), x.reversed(alongAxes: 0, 1), x.reshaped(to: [3, 2]), x.split(count: 3, alongAxis: 1)[1],
        ])
        #expect(stats.kernels == 0)
    }
}
