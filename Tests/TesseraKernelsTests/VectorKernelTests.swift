import CTesseraSIMD
import Testing
import _TesseraTestSupport

@testable import TesseraKernels

@Suite("Vector sum and exponential")
struct VectorKernelTests {
    @Test("the C sum (AVX-512 or AVX2) is bit for bit the Swift SIMD16 sum, for every length to 300")
    func matchesPortableSum() throws {
        try #require(SIMDMath.hasAVX2FMA, "no AVX2 on this CPU: the C kernel is never called")
        var rng = SeededRandom(seed: 17)
        // Values of mixed magnitude, so a different addition order would show in the low bits.
        let values = rng.floats(300, in: -1...1).enumerated().map { $1 * Float(1 << ($0 % 20)) }
        values.withUnsafeBufferPointer { buffer in
            for count in 0...300 {
                let portable = FloatReduction.portableSum(buffer.baseAddress!, count: count)
                let vector = tessera_sum_f32_vector(buffer.baseAddress!, count)
                #expect(portable.bitPattern == vector.bitPattern, "length \(count): \(portable) vs \(vector)")
            }
        }
    }

    @Test("infinities and NaN propagate as in the Swift sum")
    func specialValues() throws {
        try #require(SIMDMath.hasAVX2FMA)
        var values = [Float](repeating: 1, count: 200)
        values[70] = .infinity
        #expect(tessera_sum_f32_vector(values, 200) == .infinity)
        values[130] = -.infinity
        #expect(tessera_sum_f32_vector(values, 200).isNaN)
        values = [Float](repeating: 1, count: 200)
        values[199] = .nan
        #expect(tessera_sum_f32_vector(values, 200).isNaN)
    }

    @Test("the dispatched exponential (AVX-512 where present) is bit for bit the AVX2 one, elements and sum")
    func exponentialMatchesAVX2() throws {
        try #require(SIMDMath.hasAVX2FMA)
        var rng = SeededRandom(seed: 5)
        var values = rng.floats(300, in: -100...100)
        values[3] = .nan
        values[40] = .infinity
        values[41] = -.infinity
        values[77] = 88.8
        values[78] = -87.5
        values[120] = 0
        for count in [0, 1, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 100, 257, 300] {
            for shift: Float in [0, 3.5] {
                var wide = [Float](repeating: 0, count: count)
                var narrow = [Float](repeating: 0, count: count)
                let wideSum = tessera_exp_shifted_f32_vector(values, &wide, count, shift)
                let narrowSum = tessera_exp_shifted_f32_avx2(values, &narrow, count, shift)
                #expect(wide.map(\.bitPattern) == narrow.map(\.bitPattern), "length \(count), shift \(shift)")
                #expect(wideSum.bitPattern == narrowSum.bitPattern, "sum, length \(count), shift \(shift)")
            }
        }
    }
}
