import Foundation
import Testing
import _TesseraTestSupport

@testable import TesseraKernels

/// The activations in Double from libm: `gelu` by erf and by tanh, `silu`.
private func referenceActivation(_ activation: LinearActivation, _ x: Float) -> Double {
    let v = Double(x)
    switch activation {
    case .geluExact: return v * 0.5 * (1 + erf(v / 2.0.squareRoot()))
    case .geluTanh: return v * 0.5 * (1 + tanh((v + 0.044715 * v * v * v) * (2 / Double.pi).squareRoot()))
    case .silu: return v / (1 + exp(-v))
    }
}

/// Whether `got` is within float32 rounding of an activation computed in Double: a few ulps of
/// the value, plus the rounding of `erf + 1` (or `tanh + 1`) near 0 scaled by `x / 2` — the
/// float32 expression's cancellation in the negative tail, where the value is tiny.
private func isClose(_ got: Float, _ want: Double, input: Float) -> Bool {
    abs(Double(got) - want) <= 4e-6 * abs(want) + 1.2e-7 * abs(Double(input)) + 1e-37
}

@Suite("Right-packed GEMM activation epilogues")
struct LinearActivationTests {
    @Test("activation(a · B + bias) matches the naive product then the activation, at tail sizes")
    func matchesNaive() {
        for (index, (m, n, k)) in [(1, 1, 1), (3, 5, 7), (13, 49, 24), (9, 33, 300), (40, 113, 64)].enumerated() {
            var rng = SeededRandom(seed: UInt64(900 + index))
            let a = rng.floats(m * k, in: -2...2)
            let w = rng.floats(n * k, in: -1...1)
            let bias = rng.floats(n, in: -1...1)
            let packed = PackedGEMMRightOperand(packing: w, rowStride: k, transposed: true, depth: k, columns: n)
            // The pre-activation values, from the kernel with the bias alone (its sums are
            // checked bit for bit against a naive reference in PackedGEMMRightTests).
            let ldc = n + 3
            var linear = [Float](repeating: 0, count: m * ldc)
            a.withUnsafeBufferPointer { a in
                bias.withUnsafeBufferPointer { bias in
                    linear.withUnsafeMutableBufferPointer { c in
                        PackedGEMM.multiply(
                            rows: m, a: a.baseAddress!, lda: k, packed, firstColumn: 0, columns: n, c: c.baseAddress!,
                            ldc: ldc, columnBias: bias.baseAddress!)
                    }
                }
            }
            for activation in LinearActivation.allCases {
                var c = [Float](repeating: 42, count: m * ldc)
                a.withUnsafeBufferPointer { a in
                    bias.withUnsafeBufferPointer { bias in
                        c.withUnsafeMutableBufferPointer { c in
                            PackedGEMM.multiply(
                                rows: m, a: a.baseAddress!, lda: k, packed, firstColumn: 0, columns: n,
                                c: c.baseAddress!, ldc: ldc, columnBias: bias.baseAddress!, activation: activation)
                        }
                    }
                }
                for i in 0..<m {
                    for j in 0..<n {
                        let x = linear[i * ldc + j]
                        let want = referenceActivation(activation, x)
                        #expect(
                            isClose(c[i * ldc + j], want, input: x),
                            "\(activation) \(m)×\(n)×\(k) [\(i), \(j)]: \(c[i * ldc + j]) vs \(want) at \(x)")
                    }
                    #expect(c[(i * ldc + n)..<(i * ldc + ldc)].allSatisfy { $0 == 42 }, "\(activation) row \(i)")
                }
            }
        }
    }

    @Test("the threaded product applies the activation to every block with the bits of one call")
    func splitMatchesWhole() {
        for (m, n, k) in [(128, 768, 64), (64, 40, 512), (7, 300, 200)] {
            var rng = SeededRandom(seed: UInt64(m + n + k))
            let a = rng.floats(m * k, in: -2...2)
            let w = rng.floats(n * k, in: -1...1)
            let bias = rng.floats(n)
            let packed = PackedGEMMRightOperand(packing: w, rowStride: k, transposed: true, depth: k, columns: n)
            for activation in LinearActivation.allCases {
                var whole = [Float](repeating: 0, count: m * n)
                var split = [Float](repeating: 0, count: m * n)
                a.withUnsafeBufferPointer { a in
                    bias.withUnsafeBufferPointer { bias in
                        whole.withUnsafeMutableBufferPointer { c in
                            PackedGEMM.multiply(
                                rows: m, a: a.baseAddress!, lda: k, packed, firstColumn: 0, columns: n,
                                c: c.baseAddress!, ldc: n, columnBias: bias.baseAddress!, activation: activation)
                        }
                        split.withUnsafeMutableBufferPointer { c in
                            PackedGEMM.product(
                                rows: m, a: a.baseAddress!, lda: k, packed, c: c.baseAddress!, ldc: n,
                                columnBias: bias.baseAddress!, activation: activation)
                        }
                    }
                }
                #expect(whole.map(\.bitPattern) == split.map(\.bitPattern), "\(activation) \(m)×\(n)×\(k)")
            }
        }
    }

    @Test("apply: tails of the 256-value chunks, infinities, NaN")
    func applyEdges() {
        var rng = SeededRandom(seed: 77)
        for count in [1, 15, 17, 255, 257, 600] {
            let x = rng.floats(count, in: -8...8)
            for activation in LinearActivation.allCases {
                var y = x
                y.withUnsafeMutableBufferPointer { activation.apply(to: $0.baseAddress!, count: count) }
                for i in 0..<count {
                    let want = referenceActivation(activation, x[i])
                    #expect(isClose(y[i], want, input: x[i]), "\(activation) \(x[i]): \(y[i]) vs \(want)")
                }
            }
        }
        for activation in LinearActivation.allCases {
            var y: [Float] = [.infinity, .nan, 0]
            y.withUnsafeMutableBufferPointer { activation.apply(to: $0.baseAddress!, count: 3) }
            #expect(y[0] == .infinity && y[1].isNaN && y[2] == 0, "\(activation): \(y)")
        }
    }
}
