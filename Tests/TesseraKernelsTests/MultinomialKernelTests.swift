import Testing

@testable import TesseraKernels

/// `RandomKernels.multinomial` (binary search over each row's running sums) against a naive
/// reference: a linear scan over the running sum for the same Philox uniforms, in both the
/// strict form and the lenient one the model ops use.
@Suite("RandomKernels.multinomial against a linear scan")
struct MultinomialKernelTests {
    /// The draws the kernel documents, written plainly: sample `s` of row `r` takes the
    /// 53-bit uniform `u` of Philox counter `r * samples + s` and the first category whose
    /// running sum exceeds `u * total`; weights that are negative or not finite count as 0,
    /// and a row without a positive, finite total draws 0.
    static func reference(_ weights: [Double], rows: Int, samples: Int, seed: UInt64) -> [Int32] {
        let categories = rows == 0 ? 0 : weights.count / rows
        let philox = Philox4x32(key: seed)
        let scale = 1.0 / Double(UInt64(1) << 53)
        var result = [Int32]()
        for r in 0..<rows {
            let row = weights[(r * categories)..<((r + 1) * categories)].map { $0 >= 0 && $0.isFinite ? $0 : 0 }
            let total = row.reduce(0, +)
            for s in 0..<samples {
                guard total > 0 && total.isFinite else {
                    result.append(0)
                    continue
                }
                let block = philox.block(UInt64(r * samples + s))
                let u = Double(((UInt64(block[1]) << 32) | UInt64(block[0])) >> 11) * scale * total
                var running = 0.0
                var pick = categories - 1
                for (c, w) in row.enumerated() {
                    running += w
                    if running > u {
                        pick = c
                        break
                    }
                }
                result.append(Int32(pick))
            }
        }
        return result
    }

    /// Runs the kernel on `weights` stored as `type` (float32 or float64).
    static func draw(
        _ weights: [Double], type: KernelScalarType, rows: Int, samples: Int, seed: UInt64, lenient: Bool
    ) -> [Int32] {
        let categories = rows == 0 ? 0 : weights.count / rows
        var output = [Int32](repeating: -1, count: rows * samples)
        func run(_ pointer: UnsafeRawPointer) {
            output.withUnsafeMutableBufferPointer { out in
                RandomKernels.multinomial(
                    weights: pointer, type: type, rows: rows, categories: categories, samples: samples, seed: seed,
                    lenient: lenient, output: out.baseAddress!)
            }
        }
        if type == .float32 {
            weights.map { Float($0) }.withUnsafeBytes { run($0.baseAddress!) }
        } else {
            weights.withUnsafeBytes { run($0.baseAddress!) }
        }
        return output
    }

    /// Positive weights from a fixed linear congruential sequence, with zero-weight classes:
    /// every third class, the first class of odd rows and the last class of every row.
    static func weights(rows: Int, categories: Int) -> [Double] {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        return (0..<(rows * categories)).map { i in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let (r, c) = (i / categories, i % categories)
            if categories > 1 && (c % 3 == 2 || c == categories - 1 || (r % 2 == 1 && c == 0)) { return 0 }
            return Double(state >> 40) / Double(1 << 24) + 0.01
        }
    }

    @Test(
        "usable weights: strict and lenient both match the linear scan; zero-weight classes never drawn",
        arguments: [(1, 1, 5), (1, 2, 50), (3, 7, 33), (4, 64, 100), (2, 1000, 257), (17, 5, 1)])
    func matchesReference(rows: Int, categories: Int, samples: Int) {
        let weights = Self.weights(rows: rows, categories: categories)
        for type in [KernelScalarType.float32, .float64] {
            // The reference reads what the kernel reads: the weights in their stored type.
            let stored = type == .float32 ? weights.map { Double(Float($0)) } : weights
            let expected = Self.reference(stored, rows: rows, samples: samples, seed: 42)
            for lenient in [false, true] {
                let drawn = Self.draw(weights, type: type, rows: rows, samples: samples, seed: 42, lenient: lenient)
                #expect(drawn == expected, "\(type) lenient \(lenient) [\(rows), \(categories)] × \(samples)")
            }
            for (index, category) in expected.enumerated() {
                let row = index / samples
                #expect(categories == 1 || weights[row * categories + Int(category)] > 0)
            }
        }
    }

    @Test("lenient: negative and non-finite weights count as 0; a row without weight draws 0")
    func lenientMatchesReference() {
        let (nan, inf) = (Double.nan, Double.infinity)
        let rows: [[Double]] = [
            [0.2, nan, 0.8, 0],  // NaN skipped
            [-1, inf, 2, -inf],  // only class 2
            [0, 0, 0, 0],  // no weight: 0
            [nan, nan, nan, nan],  // no weight: 0
            [-0.5, -2, -inf, -0.0],  // no positive weight: 0
            [0, 0, 0, 3],  // only the last class
            [1e-30, 0, nan, 1e-30],  // tiny but positive
        ]
        let weights = rows.flatMap { $0 }
        for samples in [1, 8, 300] {
            let expected = Self.reference(weights, rows: rows.count, samples: samples, seed: 7)
            for type in [KernelScalarType.float32, .float64] {
                let drawn = Self.draw(weights, type: type, rows: rows.count, samples: samples, seed: 7, lenient: true)
                #expect(drawn == expected, "\(type) × \(samples)")
            }
            let byRow = (0..<rows.count).map { Set(expected[($0 * samples)..<(($0 + 1) * samples)]) }
            #expect(byRow[0].isSubset(of: [0, 2]) && byRow[1] == [2] && byRow[2] == [0] && byRow[3] == [0])
            #expect(byRow[4] == [0] && byRow[5] == [3] && byRow[6].isSubset(of: [0, 3]))
        }
    }

    @Test("draws do not depend on the thread count")
    func threadIndependent() {
        let (rows, samples) = (512, 16)
        let weights = Self.weights(rows: rows, categories: 40)
        let parallel = Self.draw(weights, type: .float32, rows: rows, samples: samples, seed: 3, lenient: true)
        let serial = KernelThreads.withSerialLoops {
            Self.draw(weights, type: .float32, rows: rows, samples: samples, seed: 3, lenient: true)
        }
        #expect(parallel == serial)
        #expect(parallel == Self.reference(weights.map { Double(Float($0)) }, rows: rows, samples: samples, seed: 3))
    }
}
