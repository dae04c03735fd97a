import CTesseraSIMD
import Testing
import _TesseraTestSupport

@testable import TesseraKernels

/// The naive `clamp(Σ_k a[i, k] · B[k, j] + bias[j])` with the kernel's rounding: one fused
/// multiply-add per term in `k` order from zero, then the bias, then `max`/`min`.
/// `B[k, j]` is `b[k * ldb + j]`, or `b[j * ldb + k]` when `transposed`.
private func reference(
    a: [Float], lda: Int, b: [Float], ldb: Int, transposed: Bool, m: Int, n: Int, k: Int, bias: [Float]?,
    clamp: ConvolutionClamp
) -> [Float] {
    var out = [Float](repeating: 0, count: m * n)
    for i in 0..<m {
        for j in 0..<n {
            var sum: Float = 0
            for kk in 0..<k {
                let weight = transposed ? b[j * ldb + kk] : b[kk * ldb + j]
                sum = sum.addingProduct(a[i * lda + kk], weight)
            }
            if let bias { sum = sum + bias[j] }
            sum = Swift.max(sum, clamp.lower)
            sum = Swift.min(sum, clamp.upper)
            out[i * n + j] = sum
        }
    }
    return out
}

@Suite("Right-packed GEMM micro-kernel")
struct PackedGEMMRightTests {
    /// (m, n, k): full tiles (8 × 48), row tails of 1 to 7, column tails inside a strip and past
    /// one or two strips, k of 1 and long sums, a transformer layer's shapes.
    static let shapes: [(m: Int, n: Int, k: Int)] = [
        (8, 48, 16), (1, 1, 1), (3, 5, 7), (13, 49, 24), (16, 96, 1), (24, 17, 33), (70, 100, 9), (9, 33, 300),
        (5, 64, 2), (40, 113, 64), (128, 96, 256),
    ]

    @Test("the product matches a naive FMA reference bit for bit, B stored either way, every epilogue")
    func matchesNaive() {
        for (index, shape) in Self.shapes.enumerated() {
            let (m, n, k) = shape
            var rng = SeededRandom(seed: UInt64(300 + index))
            let lda = k + 2
            let a = rng.floats(m * lda)
            let bias = rng.floats(n)
            for transposed in [false, true] {
                let ldb = (transposed ? k : n) + 3
                let b = rng.floats((transposed ? n : k) * ldb)
                let packed = PackedGEMMRightOperand(
                    packing: b, rowStride: ldb, transposed: transposed, depth: k, columns: n)
                for (useBias, clamp) in [
                    (false, ConvolutionClamp.none), (true, .none), (true, .relu),
                    (false, ConvolutionClamp(lower: -0.5, upper: 0.25)),
                ] {
                    // The destination has a wider row than the result: columns past n stay untouched.
                    let ldc = n + 5
                    var c = [Float](repeating: 42, count: m * ldc)
                    let rowBias = useBias ? bias : nil
                    a.withUnsafeBufferPointer { a in
                        c.withUnsafeMutableBufferPointer { c in
                            rowBias.withOptionalPointer { biasPointer in
                                PackedGEMM.multiply(
                                    rows: m, a: a.baseAddress!, lda: lda, packed, firstColumn: 0, columns: n,
                                    c: c.baseAddress!, ldc: ldc, columnBias: biasPointer, clamp: clamp)
                            }
                        }
                    }
                    let want = reference(
                        a: a, lda: lda, b: b, ldb: ldb, transposed: transposed, m: m, n: n, k: k, bias: rowBias,
                        clamp: clamp)
                    for i in 0..<m {
                        #expect(
                            Array(c[(i * ldc)..<(i * ldc + n)]) == Array(want[(i * n)..<(i * n + n)]),
                            "\(m)×\(n)×\(k) transposed \(transposed) bias \(useBias) \(clamp) row \(i)")
                        #expect(c[(i * ldc + n)..<(i * ldc + ldc)].allSatisfy { $0 == 42 })
                    }
                }
            }
        }
    }

    @Test("packing lays columns out in zero-padded strips of 16, from B or from Bᵀ")
    func packing() {
        // B is 2 × 3: [[0, 1, 2], [3, 4, 5]]; Bᵀ stored row-major is [[0, 3], [1, 4], [2, 5]].
        let b: [Float] = [0, 1, 2, 3, 4, 5]
        let bT: [Float] = [0, 3, 1, 4, 2, 5]
        let direct = PackedGEMMRightOperand(packing: b, rowStride: 3, transposed: false, depth: 2, columns: 3)
        let fromTranspose = PackedGEMMRightOperand(packing: bT, rowStride: 2, transposed: true, depth: 2, columns: 3)
        let want: [Float] =
            [0, 1, 2] + [Float](repeating: 0, count: 13) + [3, 4, 5] + [Float](repeating: 0, count: 13)
        #expect(Array(UnsafeBufferPointer(start: direct.strips, count: 32)) == want)
        #expect(Array(UnsafeBufferPointer(start: fromTranspose.strips, count: 32)) == want)
    }

    @Test("packing from Bᵀ puts element (k, j) at strip j / 16, offset k · 16 + j % 16, for every strip width")
    func packingLayoutFromTranspose() {
        // Columns: under 8, 8 (half a strip), 16, strips with tails of 1–15; depths under and over
        // one 8-deep block.
        for (index, (k, n)) in [(3, 5), (8, 8), (9, 16), (20, 23), (64, 40), (17, 33)].enumerated() {
            var rng = SeededRandom(seed: UInt64(600 + index))
            let ldb = k + 2
            let bT = rng.floats(n * ldb)  // n × k, row stride ldb
            let packed = PackedGEMMRightOperand(packing: bT, rowStride: ldb, transposed: true, depth: k, columns: n)
            let got = Array(UnsafeBufferPointer(start: packed.strips, count: (n + 15) / 16 * 16 * k))
            #expect(got == referencePanels(bT, count: n, depth: k, stride: ldb, width: 16), "k \(k), n \(n)")
        }
    }

    @Test("the threaded product gives the same bits as one call, for every split")
    func splitMatchesWhole() {
        for (m, n, k) in [(128, 768, 256), (128, 40, 512), (7, 300, 600), (64, 17, 2000)] {
            var rng = SeededRandom(seed: UInt64(m * n + k))
            let a = rng.floats(m * k)
            let w = rng.floats(n * k)
            let bias = rng.floats(n)
            let packed = PackedGEMMRightOperand(packing: w, rowStride: k, transposed: true, depth: k, columns: n)
            var whole = [Float](repeating: 0, count: m * n)
            var split = [Float](repeating: 0, count: m * n)
            a.withUnsafeBufferPointer { a in
                bias.withUnsafeBufferPointer { bias in
                    whole.withUnsafeMutableBufferPointer { c in
                        PackedGEMM.multiply(
                            rows: m, a: a.baseAddress!, lda: k, packed, firstColumn: 0, columns: n, c: c.baseAddress!,
                            ldc: n, columnBias: bias.baseAddress!, clamp: .relu)
                    }
                    split.withUnsafeMutableBufferPointer { c in
                        PackedGEMM.product(
                            rows: m, a: a.baseAddress!, lda: k, packed, c: c.baseAddress!, ldc: n,
                            columnBias: bias.baseAddress!, clamp: .relu)
                    }
                }
            }
            #expect(whole == split, "\(m)×\(n)×\(k)")
        }
    }

    @Test("blocks split by columns (multiples of 16) or rows (multiples of 8), one per thread")
    func blocks() {
        #expect(PackedGEMM.rightPackedBlocks(rows: 128, columns: 768, depth: 256, budget: 1) == (768, 128))
        #expect(PackedGEMM.rightPackedBlocks(rows: 128, columns: 768, depth: 256, budget: 2) == (384, 128))
        #expect(PackedGEMM.rightPackedBlocks(rows: 128, columns: 250, depth: 256, budget: 2) == (128, 128))
        #expect(PackedGEMM.rightPackedBlocks(rows: 128, columns: 40, depth: 512, budget: 2) == (40, 64))
        #expect(PackedGEMM.rightPackedBlocks(rows: 4, columns: 8, depth: 64, budget: 2) == (8, 4))
    }

    @Test("a block of few rows is costed by the weight it streams, so a classifier's product runs split")
    func weightBoundCost() {
        // [1, 1280] · [1280, 1000] on two threads: two blocks of 512 and 488 columns, each
        // streaming ~2.5 MB of weight; together well above the serial threshold.
        let (columns, rows) = PackedGEMM.rightPackedBlocks(rows: 1, columns: 1000, depth: 1280, budget: 2)
        #expect(columns == 512 && rows == 1)
        let block = PackedGEMM.rightPackedTaskNanoseconds(rows: 1, columns: columns, depth: 1280)
        #expect(2 * block > KernelThreads.serialThresholdNanoseconds)
        // Many rows: the arithmetic decides.
        #expect(
            PackedGEMM.rightPackedTaskNanoseconds(rows: 128, columns: 384, depth: 256)
                == 128 * 384 * 256 * 0.02 + 200)
    }

    @Test("a right operand in adopted memory, or a view of it, is packed once and kept")
    func preparedWeights() {
        let owned = TensorStorage.allocateUnpooled(byteCount: 96, zeroed: true)
        let floats = owned.pointer.assumingMemoryBound(to: Float.self)
        for i in 0..<24 { floats[i] = Float(i) }
        let adopted = TensorStorage(adopting: owned.pointer, byteCount: 96, release: nil)
        let first = PreparedWeights.packedRight(
            adopted, offset: 0, depth: 4, columns: 6, rowStride: 4, transposed: true)
        let view = TensorStorage(borrowing: adopted.pointer, byteCount: 96, keepAlive: adopted)
        let second = PreparedWeights.packedRight(view, offset: 0, depth: 4, columns: 6, rowStride: 4, transposed: true)
        #expect(first != nil && first === second)
        // Column j of B is row j of the stored [6, 4] matrix: strip row 0 is [0, 4, 8, …].
        #expect(first.map { Array(UnsafeBufferPointer(start: $0.strips, count: 3)) } == [0, 4, 8])
        // The same bytes read as a row-major B are another operand.
        let direct = PreparedWeights.packedRight(
            adopted, offset: 0, depth: 4, columns: 6, rowStride: 6, transposed: false)
        #expect(direct != nil && direct !== first)
        #expect(
            PreparedWeights.packedRight(owned, offset: 0, depth: 4, columns: 6, rowStride: 4, transposed: true) == nil)
        withExtendedLifetime((owned, adopted, view)) {}
    }
}

extension Optional where Wrapped == [Float] {
    /// Calls `body` with a pointer to the array's elements, or `nil`.
    fileprivate func withOptionalPointer<R>(_ body: (UnsafePointer<Float>?) -> R) -> R {
        switch self {
        case .some(let array): array.withUnsafeBufferPointer { body($0.baseAddress) }
        case .none: body(nil)
        }
    }
}
