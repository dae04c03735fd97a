import Testing
import _TesseraTestSupport

@testable import TesseraTensor

let reductionCases: [FixtureCase] = [
    FixtureCase("sum_all", "f_a") { $0[0].sum() },
    FixtureCase("sum_all_keep", "f_a") { $0[0].sum(keepRank: true) },
    FixtureCase("sum_ax1", "f_a") { $0[0].sum(alongAxes: 1) },
    FixtureCase("sum_ax0m1", "f_a") { $0[0].sum(alongAxes: 0, -1) },
    FixtureCase("sum_ax0m1", "f_a") { $0[0].sum(alongAxes: [-1, 0]) },
    FixtureCase("sum_axm1_keep", "f_a") { $0[0].sum(alongAxes: [-1], keepRank: true) },
    FixtureCase("mean_all", "f_a") { $0[0].mean() },
    FixtureCase("mean_ax02_keep", "f_a") { $0[0].mean(alongAxes: 0, 2, keepRank: true) },
    FixtureCase("mean_axm2", "f_a") { $0[0].mean(alongAxes: [-2]) },
    FixtureCase("max_all", "f_a") { $0[0].max() },
    FixtureCase("max_ax0_keep", "f_a") { $0[0].max(alongAxes: 0, keepRank: true) },
    FixtureCase("max_ax12", "f_a") { $0[0].max(alongAxes: [1, 2]) },
    FixtureCase("min_all_keep", "f_a") { $0[0].min(keepRank: true) },
    FixtureCase("min_axm1", "f_a") { $0[0].min(alongAxes: -1) },
    FixtureCase("min_ax01", "f_a") { $0[0].min(alongAxes: [0, 1]) },
    FixtureCase("prod_all", "f_near1") { $0[0].product() },
    FixtureCase("prod_ax2", "f_near1") { $0[0].product(alongAxes: 2) },
    FixtureCase("prod_ax01_keep", "f_near1") { $0[0].product(alongAxes: [0, 1], keepRank: true) },
    FixtureCase("all_all", "b_r") { $0[0].all() },
    FixtureCase("all_ax2", "b_r") { $0[0].all(alongAxes: 2) },
    FixtureCase("all_ax01_keep", "b_r") { $0[0].all(alongAxes: [0, 1], keepRank: true) },
    FixtureCase("any_all_keep", "b_r") { $0[0].any(keepRank: true) },
    FixtureCase("any_axm1", "b_r") { $0[0].any(alongAxes: -1) },
    FixtureCase("any_ax0", "b_r") { (.!$0[0]).any(alongAxes: [0]) },
    FixtureCase("argmax_flat", "f_a") { $0[0].argmax() },
    FixtureCase("argmax_ax1", "f_a") { $0[0].argmax(alongAxis: 1) },
    FixtureCase("argmax_axm1_keep", "f_a") { $0[0].argmax(alongAxis: -1, keepRank: true) },
    FixtureCase("argmin_flat", "f_a") { $0[0].argmin() },
    FixtureCase("argmin_ax0", "f_a") { $0[0].argmin(alongAxis: 0) },
    FixtureCase("sum_i_ax0", "i_a") { $0[0].sum(alongAxes: 0) },
    FixtureCase("mean_i_all", "i_a") { $0[0].mean() },
    FixtureCase("max_i_ax1", "i_a") { $0[0].max(alongAxes: 1) },
    FixtureCase("argmax_i_ax1", "i_a") { $0[0].argmax(alongAxis: 1) },
    FixtureCase("sum_h_ax1", "h_a") { $0[0].sum(alongAxes: 1) },
    FixtureCase("sum_rank0", "f_s") { $0[0].sum() },
    FixtureCase("argmax_rank0", "f_s") { $0[0].argmax() },
    FixtureCase("sum_empty_ax0", "f_empty") { $0[0].sum(alongAxes: 0) },
    FixtureCase("sum_empty_all", "f_empty") { $0[0].sum() },
    FixtureCase("prod_empty_ax0", "f_empty") { $0[0].product(alongAxes: 0) },
    FixtureCase("max_empty_ax1", "f_empty") { $0[0].max(alongAxes: 1) },
    FixtureCase("any_empty", "f_empty") { ($0[0] .> Float(0)).any() },
    FixtureCase("softmax_default", "f_a") { $0[0].softmax() },
    FixtureCase("softmax_ax0", "f_a") { $0[0].softmax(alongAxis: -3) },
    FixtureCase("softmax_h", "h_a") { $0[0].softmax() },
    FixtureCase("cumsum_ax0", "f_a") { $0[0].cumulativeSum() },
    FixtureCase("cumsum_axm1", "f_a") { $0[0].cumulativeSum(alongAxis: -1) },
    FixtureCase("cumprod_ax1", "f_near1") { $0[0].cumulativeProduct(alongAxis: 1) },
    FixtureCase("cumsum_i", "i_a") { $0[0].cumulativeSum(alongAxis: 1) },
]

@Suite("MLTensor reductions")
struct MLTensorReductionTests {
    @Test("reductions, arg-reductions, softmax and scans match NumPy", arguments: reductionCases)
    func reductions(_ fixture: FixtureCase) async throws {
        try await checkFixture(fixture)
    }

    @Test("dropping reduced axes is a view, not another kernel")
    func droppingAxesIsAView() {
        let x = MLTensor(shape: [2, 3], scalars: [1, 2, 3, 4, 5, 6])
        let stats = MLTensor.materialize([x.sum(alongAxes: 1)])
        #expect(stats.kernels == 1)
    }

    @Test(
        "an element-wise producer runs inside the softmax and gives the unfused result",
        arguments: [[3, 40_000], [50, 300], [2, 3, 17], [1, 1]])
    func producerFusedIntoSoftmax(_ shape: [Int]) {
        let count = shape.reduce(1, *)
        let scalars = (0..<count).map { Float(($0 * 7919) % 1000) / 97 - 5 }
        let x = MLTensor(shape: shape, scalars: scalars)
        let fused = (x / 0.7 - 1).softmax()
        let stats = MLTensor.materialize([fused])
        #expect(stats.kernels == 1, "\(stats)")
        // The same softmax on the producer's materialized result (no fusion possible).
        let producer = (x / 0.7 - 1).materialized()
        let unfused = producer.softmax()
        #expect(fused.scalars(of: Float.self) == unfused.scalars(of: Float.self))
        let half = MLTensor(shape: shape, scalars: scalars.map(Float16.init))
        let fusedHalf = (half * 2).softmax().scalars(of: Float16.self)
        let unfusedHalf = (half * 2).materialized().softmax().scalars(of: Float16.self)
        #expect(fusedHalf == unfusedHalf)
    }

    @Test("a reduction of a reshaped concatenation reduces the parts in place and matches the copy")
    func reductionOfConcatenation() {
        let a = MLTensor(shape: [4, 3, 8], scalars: (0..<96).map { Float(($0 * 37) % 23) - 11 })
        let b = MLTensor(shape: [2, 3, 8], scalars: (0..<48).map { Float(($0 * 13) % 17) - 8 })
        // A transposed part is read in row-major order, as the concatenation would hold it.
        let c = MLTensor(shape: [3, 2, 8], scalars: (0..<48).map { Float(($0 * 7) % 19) - 9 })
            .transposed(permutation: [1, 0, 2])
        func joined() -> MLTensor { MLTensor(concatenating: [a, b, c], alongAxis: 0) }
        let copied = joined().materialized()
        let cases: [(MLTensor) -> MLTensor] = [
            { $0.reshaped(to: [8, 24]).expandingShape(at: 0).mean(alongAxes: [2]) },
            { $0.reshaped(to: [24, 8]).sum(alongAxes: [1], keepRank: true) },
            { $0.max(alongAxes: [1, 2]) },
            { $0.reshaped(to: [48, 4]).argmax(alongAxis: 1) },
        ]
        for make in cases {
            let fused = make(joined())
            let stats = MLTensor.materialize([fused])
            #expect(stats.kernels == 1, "\(stats)")
            let expected = make(copied)
            #expect(fused.shape == expected.shape)
            if fused.scalarType is Int32.Type {
                #expect(fused.scalars(of: Int32.self) == expected.scalars(of: Int32.self))
            } else {
                #expect(fused.scalars(of: Float.self) == expected.scalars(of: Float.self))
            }
        }
        // Rows that straddle two parts: the concatenation is made, and the result is the same.
        let straddling = joined().reshaped(to: [3, 64]).sum(alongAxes: [1])
        #expect(MLTensor.materialize([straddling]).kernels == 2)
        #expect(
            straddling.scalars(of: Float.self)
                == copied.reshaped(to: [3, 64]).sum(alongAxes: [1]).scalars(of: Float.self))
    }

    @Test("argmax reports Int32")
    func argmaxType() {
        let x = MLTensor(shape: [3, 2], scalars: [1, 6, 5, 2, 3, 4])
        #expect(x.argmax(alongAxis: 0).scalarType is Int32.Type)
        #expect(x.argmax(alongAxis: 0).scalars(of: Int32.self) == [1, 0])
    }
}
