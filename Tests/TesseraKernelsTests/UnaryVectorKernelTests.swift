import CTesseraSIMD
import Foundation
import Testing
import _TesseraTestSupport

@testable import TesseraKernels

@Suite("Vector element-wise functions")
struct UnaryVectorKernelTests {
    /// Random values over the range where tanh and the logistic change, then the edges: signed
    /// zeros, infinities, NaN, ties for rounding, tanh's switch point 0.4, tiny and huge values.
    static func values() -> [Float] {
        var rng = SeededRandom(seed: 41)
        var values = rng.floats(120, in: -12...12)
        let special: [Float] = [
            0, -0.0, .infinity, -.infinity, .nan, 0.5, -0.5, 1.5, 2.5, -2.5, 0.4, -0.4, 0.39999998, 0.40000004,
            1e-8, -1e-30, 88, -88, 100, -100, 1e-3, -0.25, 3, 9.5,
        ]
        values[0..<special.count] = special[...]
        return values
    }

    /// Each function's expected value for one element: the IEEE operation in Float for the exact
    /// ones, libm in Double for tanh and the logistic.
    static let exact: [(Int32, String, @Sendable (Float) -> Float)] = [
        (Int32(TESSERA_UNARY_ABS), "abs", { Swift.abs($0) }),
        (Int32(TESSERA_UNARY_NEG), "neg", { -$0 }),
        (Int32(TESSERA_UNARY_SIGN), "sign", { $0 > 0 ? 1 : $0 < 0 ? -1 : $0.isNaN ? $0 : 0 }),
        (Int32(TESSERA_UNARY_SQUARE), "square", { $0 * $0 }),
        (Int32(TESSERA_UNARY_RECIPROCAL), "reciprocal", { 1 / $0 }),
        (Int32(TESSERA_UNARY_RSQRT), "rsqrt", { 1 / $0.squareRoot() }),
        (Int32(TESSERA_UNARY_FLOOR), "floor", { $0.rounded(.down) }),
        (Int32(TESSERA_UNARY_CEIL), "ceil", { $0.rounded(.up) }),
        (Int32(TESSERA_UNARY_ROUND), "round", { $0.rounded(.toNearestOrEven) }),
    ]

    static func run(_ op: Int32, _ source: [Float], count: Int) -> [Float] {
        var out = [Float](repeating: 12345, count: count + 1)
        source.withUnsafeBufferPointer { src in
            out.withUnsafeMutableBufferPointer {
                tessera_unary_f32_vector(op, src.baseAddress!, $0.baseAddress!, count)
            }
        }
        return out
    }

    @Test("the exact functions are the IEEE operation, bit for bit, every tail length")
    func exactFunctions() throws {
        try #require(SIMDMath.hasAVX2FMA, "no AVX2 on this CPU: the C kernel is never called")
        let values = Self.values()
        for (op, name, reference) in Self.exact {
            for count in [0, 1, 7, 8, 9, 15, 16, 17, 31, 33, 64, 65, values.count] {
                let got = Self.run(op, values, count: count)
                #expect(got[count] == 12345, "\(name), length \(count): wrote past the end")
                for i in 0..<count {
                    let want = reference(values[i])
                    let same = want.isNaN ? got[i].isNaN : want.bitPattern == got[i].bitPattern
                    #expect(same, "\(name)(\(values[i])) = \(got[i]), want \(want)")
                }
            }
        }
    }

    @Test("tanh is within 4e-7 of libm's (relative) and the logistic within 2e-7, every tail length")
    func tanhAndLogistic() throws {
        try #require(SIMDMath.hasAVX2FMA, "no AVX2 on this CPU: the C kernel is never called")
        var values = Self.values()
        var rng = SeededRandom(seed: 43)
        values += rng.floats(200, in: -1...1)  // dense around tanh's switch point
        for count in [0, 1, 5, 8, 13, 16, 17, 47, values.count] {
            let tanh = Self.run(Int32(TESSERA_UNARY_TANH), values, count: count)
            let logistic = Self.run(Int32(TESSERA_UNARY_SIGMOID), values, count: count)
            #expect(tanh[count] == 12345 && logistic[count] == 12345, "length \(count): wrote past the end")
            for i in 0..<count {
                let x = Double(values[i])
                if x.isNaN {
                    #expect(tanh[i].isNaN && logistic[i].isNaN, "NaN in, \(tanh[i]) and \(logistic[i]) out")
                    continue
                }
                let wantTanh = Foundation.tanh(x)
                #expect(
                    Swift.abs(Double(tanh[i]) - wantTanh) <= 4e-7 * Swift.abs(wantTanh),
                    "tanh(\(values[i])) = \(tanh[i]), libm \(wantTanh)")
                #expect(tanh[i].sign == values[i].sign, "tanh(\(values[i])) = \(tanh[i]) has the wrong sign")
                let wantLogistic = 1 / (1 + Foundation.exp(-x))
                #expect(
                    Swift.abs(Double(logistic[i]) - wantLogistic) <= 2e-7 * Swift.max(wantLogistic, 1e-30) + 1e-38,
                    "logistic(\(values[i])) = \(logistic[i]), libm \(wantLogistic)")
            }
        }
    }

    @Test("the block kernel of the fused programs takes the vector path: tanh and sign in place")
    func blockOpsInPlace() throws {
        try #require(SIMDMath.hasAVX2FMA, "no AVX2 on this CPU: the C kernel is never called")
        var values: [Float] = [-2, -0.1, 0, 0.3, 1, 5, .nan, 20, -20]
        values.withUnsafeMutableBufferPointer {
            Float.apply(.tanh, UnsafePointer($0.baseAddress!), $0.baseAddress!, $0.count)
        }
        let want: [Double] = [-2, -0.1, 0, 0.3, 1, 5, .nan, 20, -20].map { Foundation.tanh($0) }
        for (got, want) in zip(values, want) {
            #expect(want.isNaN ? got.isNaN : Swift.abs(Double(got) - want) <= 4e-7 * Swift.abs(want))
        }
        var signs: [Float] = [-3, -0.0, 0, 2, .nan]
        signs.withUnsafeMutableBufferPointer {
            Float.apply(.sign, UnsafePointer($0.baseAddress!), $0.baseAddress!, $0.count)
        }
        #expect(signs[0...3] == [-1, 0, 0, 1] && signs[4].isNaN)
    }
}
