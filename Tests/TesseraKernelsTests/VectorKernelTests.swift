import CTesseraSIMD
import Foundation
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

    @Test("the C erf (AVX-512 or AVX2) is within 2e-7 of libm's, every tail length, the SIMD16 body within 1e-7")
    func erfMatchesLibm() throws {
        try #require(SIMDMath.hasAVX2FMA, "no AVX2 on this CPU: the C kernel is never called")
        var rng = SeededRandom(seed: 23)
        var values = rng.floats(100, in: -6...6)
        values[0...5] = [0, -0.0, 0.5, -0.5, .infinity, -.infinity]
        values.withUnsafeBufferPointer { source in
            for count in 0...values.count {
                var got = [Float](repeating: .nan, count: count + 1)
                got.withUnsafeMutableBufferPointer {
                    tessera_erf_f32_vector(source.baseAddress!, $0.baseAddress!, count)
                }
                #expect(got[count].isNaN, "length \(count): wrote past the end")
                for i in 0..<count {
                    let want = Foundation.erf(Double(values[i]))
                    #expect(abs(Double(got[i]) - want) <= 2e-7, "erf(\(values[i])) = \(got[i]), libm \(want)")
                }
            }
            var simd = [Float](repeating: 0, count: 96)
            for start in stride(from: 0, to: 96, by: 16) {
                let x = SIMD16<Float>((0..<16).map { values[start + $0] })
                let y = Float.vectorErf(x)
                for lane in 0..<16 { simd[start + lane] = y[lane] }
            }
            var c = [Float](repeating: 0, count: 96)
            c.withUnsafeMutableBufferPointer { tessera_erf_f32_vector(source.baseAddress!, $0.baseAddress!, 96) }
            for i in 0..<96 { #expect(abs(simd[i] - c[i]) <= 1e-7, "erf(\(values[i])): C \(c[i]), SIMD16 \(simd[i])") }
        }
        var nan: [Float] = [.nan]
        nan.withUnsafeMutableBufferPointer { tessera_erf_f32_vector($0.baseAddress!, $0.baseAddress!, 1) }
        #expect(nan[0].isNaN)
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

    @Test("min, max and the comparisons in the C kernel select exactly as the Swift bodies, NaN and -0 included")
    func minMaxAndComparisons() throws {
        try #require(SIMDMath.hasAVX2FMA)
        var rng = SeededRandom(seed: 23)
        var a = rng.floats(200, in: -2...2)
        var b = rng.floats(200, in: -2...2)
        for i in stride(from: 0, to: 200, by: 7) { a[i] = .nan }
        for i in stride(from: 3, to: 200, by: 11) { b[i] = Float(bitPattern: 0x7FC0_0001) }  // another NaN payload
        for i in stride(from: 5, to: 200, by: 13) { (a[i], b[i]) = (0, -0.0) }
        for i in stride(from: 6, to: 200, by: 17) { b[i] = a[i] }
        func reference(_ code: Int32, _ x: Float, _ y: Float) -> Float {
            switch code {
            case 4: return y.isNaN ? y : (x.isNaN ? x : (y < x ? y : x))
            case 5: return y.isNaN ? y : (x.isNaN ? x : (y > x ? y : x))
            case 6: return x == y ? 1 : 0
            case 7: return x != y ? 1 : 0
            case 8: return x < y ? 1 : 0
            case 9: return x <= y ? 1 : 0
            case 10: return x > y ? 1 : 0
            default: return x >= y ? 1 : 0
            }
        }
        for code: Int32 in 4...11 {
            for count in [1, 15, 64, 65, 200] {
                var out = [Float](repeating: 7, count: count)
                tessera_binary_f32_vector(code, a, 0, b, 0, &out, count)
                let expected = (0..<count).map { reference(code, a[$0], b[$0]).bitPattern }
                #expect(out.map(\.bitPattern) == expected, "op \(code), length \(count)")
                // A scalar right operand.
                tessera_binary_f32_vector(code, a, 0, nil, b[3], &out, count)
                #expect(out.map(\.bitPattern) == (0..<count).map { reference(code, a[$0], b[3]).bitPattern })
            }
        }
    }
}
