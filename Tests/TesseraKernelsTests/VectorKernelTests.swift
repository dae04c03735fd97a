import CTesseraSIMD
import Foundation
import Testing
import _TesseraTestSupport

@testable import TesseraKernels

@Suite("Vector sum, exponential and erf")
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

    @Test("erf is within 1e-7 of double-precision erf on 2,000,001 points of [-10, 10] and at every tail length")
    func erfMatchesLibm() {
        // The dispatched kernel (AVX-512, AVX2 or one value at a time, whichever this CPU runs).
        let count = 2_000_001
        let points = (0..<count).map { Float(-10 + 20 * Double($0) / Double(count - 1)) }
        var got = [Float](repeating: .nan, count: count)
        got.withUnsafeMutableBufferPointer { tessera_erf_f32_vector(points, $0.baseAddress!, count) }
        var worst = (error: 0.0, at: Float(0))
        for i in 0..<count {
            let error = abs(Double(got[i]) - Foundation.erf(Double(points[i])))
            if error > worst.error { worst = (error, points[i]) }
        }
        #expect(worst.error <= 1e-7, "erf(\(worst.at)) is \(worst.error) from the double erf")
        #expect(got.allSatisfy { abs($0) <= 1 })
        // Every width this CPU runs (16, 8 and 1 lanes) gives the same bits.
        for lanes: Int32 in [16, 8, 1] {
            var other = [Float](repeating: .nan, count: count)
            let used = other.withUnsafeMutableBufferPointer {
                tessera_erf_f32_lanes(points, $0.baseAddress!, count, lanes)
            }
            let same = zip(got, other).allSatisfy { $0.bitPattern == $1.bitPattern }
            #expect(same, "\(used) lanes differ from the dispatched width")
        }
        // Each length to 40 (full vectors and every masked or copied tail), at every width,
        // writes exactly n values.
        var rng = SeededRandom(seed: 23)
        let values = rng.floats(40, in: -6...6)
        for lanes: Int32 in [16, 8, 1] {
            for n in 0...values.count { expectErfTail(values, count: n, lanes: lanes) }
        }
    }

    private func expectErfTail(_ values: [Float], count n: Int, lanes: Int32) {
        var out = [Float](repeating: .nan, count: n + 1)
        out.withUnsafeMutableBufferPointer { _ = tessera_erf_f32_lanes(values, $0.baseAddress!, n, lanes) }
        #expect(out[n].isNaN, "length \(n), \(lanes) lanes: wrote past the end")
        for i in 0..<n {
            let want = Foundation.erf(Double(values[i]))
            #expect(abs(Double(out[i]) - want) <= 1e-7, "erf(\(values[i])) = \(out[i]), double \(want)")
        }
    }

    @Test("erf keeps relative precision for tiny x, is odd, and maps ±0, ±inf, huge values and NaN right")
    func erfSpecialValues() {
        // Powers of two from 2^-1 to 2^-126 (the smallest normal float): erf(x) ≈ 2x/√π, within
        // two units in the last place.
        let tiny = (1...126).map { Float(sign: .plus, exponent: -$0, significand: 1) }
        var out = [Float](repeating: 0, count: tiny.count)
        out.withUnsafeMutableBufferPointer { tessera_erf_f32_vector(tiny, $0.baseAddress!, tiny.count) }
        for (x, y) in zip(tiny, out) {
            let want = Float(Foundation.erf(Double(x)))
            #expect(abs(y - want) <= 2 * want.ulp, "erf(\(x)) = \(y), double \(want)")
        }
        let special: [Float] = [
            0, -0.0, .infinity, -.infinity, .greatestFiniteMagnitude, -.greatestFiniteMagnitude, 4, -4, 1e10, -1e10,
            .nan, 0.5, -0.5, 3.5, -3.5, Float(1).nextDown,
        ]
        var result = [Float](repeating: 0, count: special.count)
        result.withUnsafeMutableBufferPointer { tessera_erf_f32_vector(special, $0.baseAddress!, special.count) }
        #expect(result[0] == 0 && result[0].sign == .plus)
        #expect(result[1] == 0 && result[1].sign == .minus)
        #expect(Array(result[2...9]) == [1, -1, 1, -1, 1, -1, 1, -1])
        #expect(result[10].isNaN)
        for i in 11..<special.count {
            #expect(abs(Double(result[i]) - Foundation.erf(Double(special[i]))) <= 1e-7, "erf(\(special[i]))")
        }
        // Odd: erf(-x) has exactly the bits of -erf(x).
        var rng = SeededRandom(seed: 29)
        let values = rng.floats(1000, in: -5...5)
        var positive = [Float](repeating: 0, count: 1000)
        var negative = [Float](repeating: 0, count: 1000)
        positive.withUnsafeMutableBufferPointer { tessera_erf_f32_vector(values, $0.baseAddress!, 1000) }
        negative.withUnsafeMutableBufferPointer { tessera_erf_f32_vector(values.map { -$0 }, $0.baseAddress!, 1000) }
        #expect(zip(positive, negative).allSatisfy { $0.bitPattern == (-$1).bitPattern })
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

    @Test("the dispatched exponential is bit for bit the AVX2 one at the ends of its range")
    func exponentialMatchesAVX2AtTheEnds() throws {
        try #require(SIMDMath.hasAVX2FMA)
        // Results near the smallest normal float (x just above -87.34) and the largest (x just
        // below 88.72), and past both ends: where the AVX-512 body's one scalef by 2^n and the
        // AVX2 body's two multiplies by 2^(n/2) would round differently if either product were
        // inexact.
        var values: [Float] = []
        for i in 0..<4096 { values.append(-87.5 + Float(i) * (0.7 / 4096)) }
        for i in 0..<4096 { values.append(88.3 + Float(i) * (0.45 / 4096)) }
        var x: Float = -87.3
        for _ in 0..<512 {
            values.append(x)
            x = x.nextDown
        }
        var wide = [Float](repeating: 0, count: values.count)
        var narrow = [Float](repeating: 0, count: values.count)
        let wideSum = tessera_exp_shifted_f32_vector(values, &wide, values.count, 0)
        let narrowSum = tessera_exp_shifted_f32_avx2(values, &narrow, values.count, 0)
        let first = values.indices.first { wide[$0].bitPattern != narrow[$0].bitPattern }
        #expect(first == nil, "x = \(first.map { values[$0] } ?? 0)")
        #expect(wideSum.bitPattern == narrowSum.bitPattern)
        // The sweep reaches both ends: zeros, infinities, and results within 2× of the smallest normal.
        #expect(wide.contains(0) && wide.contains(.infinity))
        #expect(wide.contains { $0 > 0 && $0 < 2 * .leastNormalMagnitude })
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
