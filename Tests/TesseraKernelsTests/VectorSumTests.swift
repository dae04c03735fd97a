import CTesseraSIMD
import Testing
import _TesseraTestSupport

@testable import TesseraKernels

@Suite("Vector sum")
struct VectorSumTests {
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
}
