import Testing
import _TesseraTestSupport

@testable import TesseraTensor

let linearAlgebraCases: [FixtureCase] = [
    FixtureCase("mm_2x2", "f_m23", "f_m32") { $0[0].matmul($0[1]) },
    FixtureCase("mm_mv", "f_m34", "f_v4") { $0[0].matmul($0[1]) },
    FixtureCase("mm_vm", "f_v4", "f_m45") { $0[0].matmul($0[1]) },
    FixtureCase("mm_vv", "f_v4") { $0[0].matmul($0[0]) },
    FixtureCase("mm_batch_contract", "f_b3114", "f_m42") { $0[0].matmul($0[1]) },
    FixtureCase("mm_batch_broadcast", "f_b2134", "f_b546") { $0[0].matmul($0[1]) },
    FixtureCase("mm_batch_vec", "f_b234", "f_v4") { $0[0].matmul($0[1]) },
    FixtureCase("mm_vec_batch", "f_v4", "f_b245") { $0[0].matmul($0[1]) },
    FixtureCase("mm_i", "i_m23", "i_m32") { $0[0].matmul($0[1]) },
    FixtureCase("mm_h", "h_m23", "h_m32") { $0[0].matmul($0[1]) },
    FixtureCase("band_1_2", "f_b245") { $0[0].bandPart(lowerBandCount: 1, upperBandCount: 2) },
    FixtureCase("band_m1_0", "f_b245") { $0[0].bandPart(lowerBandCount: -1, upperBandCount: 0) },
    FixtureCase("band_0_m1", "f_b245") { $0[0].bandPart(lowerBandCount: 0, upperBandCount: -1) },
    FixtureCase("band_0_0", "f_b245") { $0[0].bandPart(lowerBandCount: 0, upperBandCount: 0) },
    FixtureCase("band_m1_m1", "f_b245") { $0[0].bandPart(lowerBandCount: -1, upperBandCount: -1) },
    FixtureCase("band_7_1", "f_b245") { $0[0].bandPart(lowerBandCount: 7, upperBandCount: 1) },
    FixtureCase("band_i", "i_m23") { $0[0].bandPart(lowerBandCount: 0, upperBandCount: 1) },
]

@Suite("MLTensor linear algebra")
struct MLTensorLinearAlgebraTests {
    @Test("matmul and bandPart match NumPy", arguments: linearAlgebraCases)
    func linearAlgebra(_ fixture: FixtureCase) async throws {
        try await checkFixture(fixture)
    }

    @Test("Apple's documented matmul example")
    func documentedExample() async {
        let a = MLTensor(shape: [2, 3], scalars: [1, 2, 3, 4, 5, 6])
        let b = MLTensor(shape: [3, 2], scalars: [7, 8, 9, 10, 11, 12])
        #expect(await a.matmul(b).scalars(of: Float.self) == [58, 64, 139, 154])
        #expect(
            MLTensor(zeros: [3, 1, 1, 4], scalarType: Float.self).matmul(
                MLTensor(zeros: [4, 2], scalarType: Float.self)
            ).shape == [3, 1, 1, 2])
    }

    @Test("bandPart stays lazy: its mask fuses with the select into one program")
    func bandPartFuses() {
        let x = MLTensor(ones: [3, 4], scalarType: Float.self)
        let stats = MLTensor.materialize([x.bandPart(lowerBandCount: 1, upperBandCount: 0)])
        #expect(stats.kernels == 1)
        #expect(stats.fusedGroups == 1)
    }
}
