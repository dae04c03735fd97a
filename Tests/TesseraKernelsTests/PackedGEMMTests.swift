import CTesseraSIMD
import Testing
import _TesseraTestSupport

@testable import TesseraKernels

/// The naive `clamp((Σ_k a[i, k] · b[k, j] + bias[i]) + residual[i, j])` in Double.
private func reference(
    a: [Float], b: [Float], m: Int, n: Int, k: Int, ldb: Int, bias: [Float]?, residual: [Float]?,
    clamp: ConvolutionClamp
) -> [Double] {
    var out = [Double](repeating: 0, count: m * n)
    for i in 0..<m {
        for j in 0..<n {
            var sum = 0.0
            for kk in 0..<k { sum += Double(a[i * k + kk]) * Double(b[kk * ldb + j]) }
            if let bias { sum += Double(bias[i]) }
            if let residual { sum += Double(residual[i * n + j]) }
            sum = Swift.min(Swift.max(sum, Double(clamp.lower)), Double(clamp.upper))
            out[i * n + j] = sum
        }
    }
    return out
}

@Suite("Packed GEMM micro-kernel")
struct PackedGEMMTests {
    /// (m, n, k): full tiles, a row tail (m not a multiple of 8 or 4), column tails of 1 to 47
    /// past a tile of 48 (AVX-512) or 24 (AVX2) — AVX-512's narrow tails of 1 to 4 columns among
    /// them, with one and two panels — k of 1 and long sums; AVX-512's chunks of columns (k ≤ 512:
    /// 163 → 144 columns for k = 200, so 200 columns are two chunks, the second ending in a tile of
    /// 8) and its depth blocks (k > 512, with a narrow tail of 2); a 7 × 7 plane's one tile and a
    /// narrow tail over several panels, in one depth block and in two.
    static let shapes: [(m: Int, n: Int, k: Int)] = [
        (8, 48, 16), (1, 1, 1), (3, 5, 7), (13, 49, 24), (16, 96, 1), (24, 17, 33), (70, 100, 9), (9, 33, 300),
        (5, 64, 2), (40, 113, 64), (17, 200, 200), (10, 50, 600), (70, 49, 40), (41, 98, 520), (33, 49, 300),
    ]

    /// The bodies this CPU runs: AVX2 always, AVX-512 when present.
    static var variants: [Int32] { tessera_sgemm_has_avx512() != 0 ? [0, 1] : [0] }

    @Test("the packed product matches the naive one for every epilogue, shape and body")
    func matchesNaive() throws {
        try #require(PackedGEMM.isAvailable)
        for (index, shape) in Self.shapes.enumerated() {
            let (m, n, k) = shape
            var rng = SeededRandom(seed: UInt64(100 + index))
            let ldb = n + 3
            let a = rng.floats(m * k)
            let b = rng.floats(k * ldb)
            let bias = rng.floats(m)
            let residual = rng.floats(m * n)
            let packed = PackedGEMMOperand(packing: a, lda: k, rows: m, depth: k)
            for variant in Self.variants {
                for (useBias, useResidual, clamp) in [
                    (false, false, ConvolutionClamp.none), (true, false, .none), (true, false, .relu6),
                    (false, true, .relu), (true, true, ConvolutionClamp(lower: -0.5, upper: 0.25)),
                ] {
                    // The destination has a wider row than the result: columns past n stay untouched.
                    let ldc = n + 5
                    var c = [Float](repeating: 42, count: m * ldc)
                    let biasCopy = useBias ? bias : nil
                    let residualCopy = useResidual ? residual : nil
                    run(
                        variant, packed, m: m, n: n, b: b, ldb: ldb, c: &c, ldc: ldc, bias: biasCopy,
                        residual: residualCopy, clamp: clamp)
                    let got = (0..<m).flatMap { i in (0..<n).map { Double(c[i * ldc + $0]) } }
                    let want = reference(
                        a: a, b: b, m: m, n: n, k: k, ldb: ldb, bias: biasCopy, residual: residualCopy, clamp: clamp)
                    let mismatch = firstMismatch(got, want, rtol: 1e-5, atol: 1e-5)
                    #expect(
                        mismatch == nil,
                        "\(shape), body \(variant), \(useBias) \(useResidual) \(clamp): \(mismatch ?? "")")
                    let untouched = (0..<m).allSatisfy { i in (n..<ldc).allSatisfy { c[i * ldc + $0] == 42 } }
                    #expect(untouched, "\(shape), body \(variant): wrote past the last column")
                }
            }
        }
    }

    /// (m, k) of the tails: one and a few panels, the tail after each group of eight panels
    /// (17 panels: groups end at panels 8 and 16, then the last), one and two depth blocks.
    @Test("a narrow tail of 1 to 4 columns gives the bits the 48-column tile gives those columns")
    func narrowTail() throws {
        try #require(PackedGEMM.isAvailable)
        for (index, (m, k)) in [(13, 24), (70, 9), (24, 600), (133, 40), (133, 530)].enumerated() {
            var rng = SeededRandom(seed: UInt64(300 + index))
            let ldb = 64
            let a = rng.floats(m * k)
            let b = rng.floats(k * ldb)
            let bias = rng.floats(m)
            let residual = rng.floats(m * ldb)
            let packed = PackedGEMMOperand(packing: a, lda: k, rows: m, depth: k)
            for tail in 1...4 {
                // 48 + tail columns end in a narrow tail; 64 columns compute the same ones in tiles.
                var narrow = [Float](repeating: 0, count: m * ldb)
                var wide = [Float](repeating: 0, count: m * ldb)
                for (n, out) in [(48 + tail, 0), (64, 1)] {
                    var c = [Float](repeating: 0, count: m * ldb)
                    bias.withUnsafeBufferPointer { biasPointer in
                        residual.withUnsafeBufferPointer { residualPointer in
                            var e = tessera_gemm_epilogue(
                                bias: biasPointer.baseAddress, residual: residualPointer.baseAddress, ldr: ldb, lo: 0,
                                hi: 0.75)
                            tessera_sgemm_packed_variant(1, packed.panels, m, n, k, b, ldb, &c, ldb, &e)
                        }
                    }
                    if out == 0 { narrow = c } else { wide = c }
                }
                let same = (0..<m).allSatisfy { i in
                    (0..<(48 + tail)).allSatisfy { narrow[i * ldb + $0].bitPattern == wide[i * ldb + $0].bitPattern }
                }
                #expect(same, "m \(m), k \(k), tail \(tail)")
            }
        }
    }

    @Test("a block of rows starting at a panel boundary gives those rows of the whole product")
    func rowBlocks() throws {
        try #require(PackedGEMM.isAvailable)
        let (m, n, k) = (37, 29, 11)
        var rng = SeededRandom(seed: 7)
        let a = rng.floats(m * k)
        let b = rng.floats(k * n)
        let bias = rng.floats(m)
        let packed = PackedGEMMOperand(packing: a, lda: k, rows: m, depth: k)
        var whole = [Float](repeating: 0, count: m * n)
        var blocks = [Float](repeating: 0, count: m * n)
        bias.withUnsafeBufferPointer { bias in
            PackedGEMM.multiply(
                packed, firstRow: 0, rows: m, columns: n, b: b, ldb: n, c: &whole, ldc: n, bias: bias.baseAddress,
                clamp: .relu)
            blocks.withUnsafeMutableBufferPointer { out in
                for first in stride(from: 0, to: m, by: 16) {
                    PackedGEMM.multiply(
                        packed, firstRow: first, rows: Swift.min(16, m - first), columns: n, b: b, ldb: n,
                        c: out.baseAddress! + first * n, ldc: n, bias: bias.baseAddress! + first, clamp: .relu)
                }
            }
        }
        #expect(blocks == whole)
    }

    @Test("packing pads the last panel with zero rows")
    func packing() {
        let a: [Float] = (0..<(3 * 2)).map(Float.init)  // 3 × 2
        let packed = PackedGEMMOperand(packing: a, lda: 2, rows: 3, depth: 2)
        let panel = Array(UnsafeBufferPointer(start: packed.panels, count: 16))
        #expect(panel == [0, 2, 4, 0, 0, 0, 0, 0, 1, 3, 5, 0, 0, 0, 0, 0])
    }

    @Test("packing puts element (r, k) at panel r / 8, offset k · 8 + r % 8, for full and partial panels and blocks")
    func packingLayout() {
        // Rows: one full panel, a partial one, several with a tail; depths: under one 8-column
        // block, whole blocks, blocks with a tail; a row stride wider than the depth.
        for (index, (m, k)) in [(8, 8), (8, 3), (3, 8), (16, 17), (21, 64), (64, 100), (9, 1)].enumerated() {
            var rng = SeededRandom(seed: UInt64(400 + index))
            let lda = k + 3
            let a = rng.floats(m * lda)
            let packed = PackedGEMMOperand(packing: a, lda: lda, rows: m, depth: k)
            let got = Array(UnsafeBufferPointer(start: packed.panels, count: (m + 7) / 8 * 8 * k))
            #expect(got == referencePanels(a, count: m, depth: k, stride: lda, width: 8), "m \(m), k \(k)")
        }
    }

    @Test("gathering eight rows column by column gives the same bytes in the vector and scalar bodies")
    func gatherBodies() {
        for (index, (k, ldd)) in [(1, 8), (7, 8), (8, 8), (29, 16), (64, 16), (130, 8)].enumerated() {
            var rng = SeededRandom(seed: UInt64(500 + index))
            let lds = k + 5
            // NaN payloads and negative zero must move unchanged.
            var source = rng.floats(8 * lds)
            source[0] = -0.0
            source[1] = Float(bitPattern: 0x7FC0_1234)
            var vector = [Float](repeating: 1, count: k * ldd)
            var scalar = [Float](repeating: 1, count: k * ldd)
            tessera_gather_columns8_variant(1, source, lds, k, &vector, ldd)
            tessera_gather_columns8_variant(0, source, lds, k, &scalar, ldd)
            #expect(vector.map(\.bitPattern) == scalar.map(\.bitPattern), "k \(k), ldd \(ldd)")
            var want = [Float](repeating: 1, count: k * ldd)
            for kk in 0..<k {
                for r in 0..<8 { want[kk * ldd + r] = source[r * lds + kk] }
            }
            #expect(scalar.map(\.bitPattern) == want.map(\.bitPattern), "k \(k), ldd \(ldd)")
        }
    }

    @Test("weights in adopted memory (or borrowed from it) are packed once and kept; owned memory is not kept")
    func preparedWeights() {
        let owned = TensorStorage.allocateUnpooled(byteCount: 48, zeroed: true)
        let floats = owned.pointer.assumingMemoryBound(to: Float.self)
        for i in 0..<12 { floats[i] = Float(i) }
        let adopted = TensorStorage(adopting: owned.pointer, byteCount: 48, release: nil)
        let first = PreparedWeights.packed(adopted, offset: 0, rows: 3, depth: 4)
        let second = PreparedWeights.packed(adopted, offset: 0, rows: 3, depth: 4)
        #expect(first != nil && first === second)
        #expect(first.map { Array(UnsafeBufferPointer(start: $0.panels, count: 3)) } == [0, 4, 8])
        #expect(PreparedWeights.packed(adopted, offset: 4, rows: 2, depth: 4) !== first)
        #expect(PreparedWeights.packed(owned, offset: 0, rows: 3, depth: 4) == nil)
        let borrowed = TensorStorage(borrowing: owned.pointer, byteCount: 48, keepAlive: owned)
        #expect(PreparedWeights.packed(borrowed, offset: 0, rows: 3, depth: 4) == nil)
        // A view of adopted memory (how a model's constant reaches the graph) shares the entry
        // of the same elements, found through the adopted storage.
        let view = TensorStorage(borrowing: adopted.pointer + 16, byteCount: 32, keepAlive: adopted)
        let viewed = PreparedWeights.packed(view, offset: 0, rows: 2, depth: 4)
        #expect(viewed != nil && viewed === PreparedWeights.packed(adopted, offset: 4, rows: 2, depth: 4))
        #expect(viewed.map { Array(UnsafeBufferPointer(start: $0.panels, count: 2)) } == [4, 8])
        let viewOfView = TensorStorage(borrowing: view.pointer, byteCount: 32, keepAlive: view)
        #expect(PreparedWeights.packed(viewOfView, offset: 0, rows: 2, depth: 4) === viewed)
        withExtendedLifetime((owned, adopted, view)) {}
    }

    private func run(
        _ variant: Int32, _ packed: PackedGEMMOperand, m: Int, n: Int, b: [Float], ldb: Int, c: inout [Float], ldc: Int,
        bias: [Float]?, residual: [Float]?, clamp: ConvolutionClamp
    ) {
        let (lo, hi) = clamp.kernelBounds
        let biasPointer = bias.map { UnsafeMutablePointer<Float>.allocate(capacity: $0.count) }
        let residualPointer = residual.map { UnsafeMutablePointer<Float>.allocate(capacity: $0.count) }
        if let bias { biasPointer!.initialize(from: bias, count: bias.count) }
        if let residual { residualPointer!.initialize(from: residual, count: residual.count) }
        defer {
            biasPointer?.deallocate()
            residualPointer?.deallocate()
        }
        var epilogue = tessera_gemm_epilogue(
            bias: biasPointer.map { UnsafePointer($0) }, residual: residualPointer.map { UnsafePointer($0) }, ldr: n,
            lo: lo, hi: hi)
        tessera_sgemm_packed_variant(variant, packed.panels, m, n, packed.depth, b, ldb, &c, ldc, &epilogue)
    }
}

@Suite("Packed convolution partitions")
struct PackedConvolutionPartitionTests {
    @Test("im2col tasks: ~192 KiB of columns, evened out in multiples of 16, channel blocks for small planes")
    func im2colTasks() {
        // MobileNetV2's first layer: 27 taps, 12 544 positions → 8 tiles of 1 568.
        #expect(ConvolutionKernels.im2colTaskColumns(patch: 27, positions: 12544, columnBufferBytes: 8 << 20) == 1568)
        // ResNet-50's last 3×3 (4 608 taps, 7×7): 48 columns and a narrow tail of 1, one task.
        #expect(ConvolutionKernels.im2colTaskColumns(patch: 4608, positions: 49, columnBufferBytes: 8 << 20) == 49)
        // 8 columns past a task of 48 are two tasks, evened to 32 each.
        #expect(ConvolutionKernels.im2colTaskColumns(patch: 4608, positions: 56, columnBufferBytes: 8 << 20) == 32)
        #expect(ConvolutionKernels.im2colTaskRows(outputChannels: 512, tiles: 2, budget: 2) == 256)
        #expect(ConvolutionKernels.im2colTaskRows(outputChannels: 512, tiles: 8, budget: 2) == 512)
        #expect(ConvolutionKernels.im2colTaskRows(outputChannels: 512, tiles: 2, budget: 1) == 512)
        // The column buffer budget still caps a tile.
        #expect(ConvolutionKernels.im2colTaskColumns(patch: 27, positions: 12544, columnBufferBytes: 27 * 4 * 5) == 5)
    }

    @Test("im2col splits: balanced across threads where the cache-sized tiles are not")
    func im2colSplits() {
        let bytes = 8 << 20
        func split(_ o: Int, _ patch: Int, _ positions: Int, budget: Int = 2) -> (columns: Int, rows: Int) {
            ConvolutionKernels.im2colTaskSplit(
                outputChannels: o, patch: patch, positions: positions, columnBufferBytes: bytes, budget: budget)
        }
        // ResNet-50's 1 × 1 stride-2 shortcut at 28 × 28: 5 tiles of 160 leave 3 tasks for one
        // thread and 2 for the other; two blocks of 256 channels per tile make 5 + 5.
        #expect(split(512, 256, 784) == (160, 256))
        // At 14 × 14: tiles of 80, 80 and 36 (two channel blocks each) become 4 tiles of 49.
        #expect(split(1024, 512, 196) == (49, 1024))
        // One thread, and splits that are already even, keep the cache-sized tiles.
        #expect(split(512, 256, 784, budget: 1) == (160, 512))
        #expect(split(32, 27, 12544) == (1568, 32))
        // ConvolutionTests' rebalanced case: 196 columns as 112 + 84 in two channel blocks → 98 + 98.
        #expect(split(64, 16, 196) == (98, 64))
        // Never slower by the model than the cache-sized split, never wider than its tiles.
        for (o, patch, positions) in [(512, 4608, 49), (256, 2304, 196), (64, 147, 12544), (96, 27, 300), (40, 9, 17)] {
            for budget in [2, 3, 4] {
                let chosen = split(o, patch, positions, budget: budget)
                let base = ConvolutionKernels.im2colTaskColumns(
                    patch: patch, positions: positions, columnBufferBytes: bytes)
                let baseRows = ConvolutionKernels.im2colTaskRows(
                    outputChannels: o, tiles: (positions + base - 1) / base, budget: budget)
                let time = { (columns: Int, rows: Int) in
                    ConvolutionKernels.im2colSplitTime(
                        outputChannels: o, patch: patch, positions: positions, columns: columns, rows: rows,
                        threads: budget)
                }
                #expect(
                    time(chosen.columns, chosen.rows) <= time(base, baseRows), "\(o) \(patch) \(positions) \(budget)")
                #expect(chosen.columns >= 1 && chosen.columns <= base && chosen.rows >= 1)
            }
        }
    }

    @Test("pointwise blocks: whole below ~1 M multiply-adds or with one thread, else ~2 per thread")
    func pointwiseBlocks() {
        #expect(ConvolutionKernels.packedBlocks(rows: 96, columns: 12544, depth: 16, budget: 1) == (12544, 96))
        #expect(ConvolutionKernels.packedBlocks(rows: 8, columns: 100, depth: 8, budget: 2) == (100, 8))
        #expect(ConvolutionKernels.packedBlocks(rows: 96, columns: 12544, depth: 16, budget: 2) == (3168, 96))
        #expect(ConvolutionKernels.packedBlocks(rows: 1280, columns: 49, depth: 320, budget: 2) == (49, 320))
    }

    @Test("pointwise blocks leave two threads equal work on MobileNetV2's 28 × 28 and 7 × 7 planes")
    func pointwiseBlocksBalance() {
        // 784 columns in four blocks of 196 (4 tiles and a narrow tail of 4), not 240 + 240 | 240 + 64.
        #expect(ConvolutionKernels.packedBlocks(rows: 32, columns: 784, depth: 144, budget: 2) == (196, 32))
        // 160 rows of a 7 × 7 plane in four blocks of 40 (whole panels), not 48 + 48 | 48 + 16.
        #expect(ConvolutionKernels.packedBlocks(rows: 160, columns: 49, depth: 960, budget: 2) == (49, 40))
        for (m, n, k) in [(32, 784, 144), (160, 49, 960), (64, 196, 384), (24, 3136, 96)] {
            let (columns, rows) = ConvolutionKernels.packedBlocks(rows: m, columns: n, depth: k, budget: 2)
            let even = ConvolutionKernels.packedBlockCost(rows: m, columns: n, depth: k) / 2
            let slowest = ConvolutionKernels.packedSplitTime(
                rows: m, columns: n, depth: k, rowBlock: rows, columnBlock: columns, threads: 2)
            #expect(slowest <= even * 1.08, "\((m, n, k)): \(columns) × \(rows) blocks")
        }
    }

    @Test("a packed product split into unaligned blocks across two threads matches the naive one")
    func splitProductMatchesNaive() throws {
        try #require(PackedGEMM.isAvailable)
        for (index, (m, n, k)) in [(32, 784, 48), (160, 49, 140), (40, 300, 100)].enumerated() {
            var rng = SeededRandom(seed: UInt64(300 + index))
            let a = rng.floats(m * k)
            let b = rng.floats(k * n)
            let bias = rng.floats(m)
            let residual = rng.floats(m * n)
            let packed = PackedGEMMOperand(packing: a, lda: k, rows: m, depth: k)
            var c = [Float](repeating: 42, count: m * n)
            b.withUnsafeBufferPointer { b in
                bias.withUnsafeBufferPointer { bias in
                    residual.withUnsafeBufferPointer { residual in
                        c.withUnsafeMutableBufferPointer { c in
                            ConvolutionKernels.packedProduct(
                                packed, columns: n, b: b.baseAddress!, ldb: n, c: c.baseAddress!, ldc: n,
                                bias: bias.baseAddress, residual: residual.baseAddress, clamp: .relu6, budget: 2)
                        }
                    }
                }
            }
            let want = reference(
                a: a, b: b, m: m, n: n, k: k, ldb: n, bias: bias, residual: residual, clamp: .relu6)
            let mismatch = firstMismatch(c.map(Double.init), want, rtol: 1e-5, atol: 1e-5)
            #expect(mismatch == nil, "\((m, n, k)): \(mismatch ?? "")")
        }
    }
}
