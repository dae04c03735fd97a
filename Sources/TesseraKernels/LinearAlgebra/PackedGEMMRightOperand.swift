import CTesseraSIMD

/// The right operand of a GEMM packed for the right-packed micro-kernel: a `depth × columns`
/// matrix `B` in strips of 16 columns (``TESSERA_GEMM_STRIP_COLUMNS``), each strip stored
/// `k`-major so the kernel reads it as one sequential stream, columns past `columns` as zeros.
///
/// A linear layer's constant weight `W [out, in]` is `Bᵀ` for `y = x · Wᵀ`: it is packed once
/// (see ``PreparedWeights/packedRight(_:offset:depth:columns:rowStride:transposed:)``) and
/// ``PackedGEMM/product(rows:a:lda:_:c:ldc:columnBias:clamp:activation:)`` multiplies row-major
/// activations by it, read in place.
///
/// ```swift
/// // W [768, 256] (a linear layer's weight): B = Wᵀ is 256 × 768
/// let packed = PackedGEMMRightOperand(packing: w, rowStride: 256, transposed: true, depth: 256, columns: 768)
/// ```
package final class PackedGEMMRightOperand: @unchecked Sendable {
    // `@unchecked`: the strips are written once, in the initializer, and only read afterwards.
    /// `k`, the operand's rows (the product's inner dimension).
    package let depth: Int
    /// `n`, the operand's columns.
    package let columns: Int
    /// The strips' first float: in `owner`'s allocation, or in memory it keeps alive.
    private let start: UnsafePointer<Float>
    /// What keeps the strips' memory alive: their ``AlignedBuffer``, or the owner of borrowed
    /// memory (a compiled model's mapped file).
    private let owner: AnyObject

    /// Columns per strip.
    package static let stripColumns = Int(TESSERA_GEMM_STRIP_COLUMNS)

    /// Packs `B` (`depth × columns`): stored row-major at `b` with row stride `rowStride`, or,
    /// when `transposed`, as `Bᵀ` (`columns × depth`) row-major with row stride `rowStride`.
    ///
    /// - Precondition: `depth ≥ 0`, `columns ≥ 0`, and `rowStride` at least the stored rows' length.
    package init(packing b: UnsafePointer<Float>, rowStride: Int, transposed: Bool, depth: Int, columns: Int) {
        kernelPrecondition(
            depth >= 0 && columns >= 0 && rowStride >= (transposed ? depth : columns),
            "[gemm] cannot pack \(depth)×\(columns) (transposed: \(transposed)) with row stride \(rowStride)")
        self.depth = depth
        self.columns = columns
        let buffer = AlignedBuffer(unpooledByteCount: Self.byteCount(depth: depth, columns: columns))
        tessera_sgemm_pack_b(b, rowStride, transposed ? 1 : 0, depth, columns, buffer.typedPointer(Float.self))
        start = UnsafePointer(buffer.typedPointer(Float.self))
        owner = buffer
    }

    /// Strips already packed, read in place from memory `keepAlive` keeps alive (a compiled
    /// model's stored form, ``PreparedWeights/register(_:base:keepAlive:)``).
    ///
    /// - Precondition: `strips` holds ``byteCount(depth:columns:)`` bytes, 64-byte aligned, that
    ///   nobody writes while `keepAlive` lives.
    package init(borrowing strips: UnsafePointer<Float>, depth: Int, columns: Int, keepAlive: AnyObject) {
        kernelPrecondition(depth >= 0 && columns >= 0, "[gemm] cannot borrow \(depth)×\(columns) strips")
        self.depth = depth
        self.columns = columns
        start = strips
        owner = keepAlive
    }

    /// The bytes the packed form of a `depth × columns` operand takes.
    package static func byteCount(depth: Int, columns: Int) -> Int {
        Swift.max(1, tessera_sgemm_packed_b_count(depth, columns)) * MemoryLayout<Float>.stride
    }

    /// The strips.
    package var strips: UnsafePointer<Float> { start }

    /// The bytes the strips take.
    package var byteCount: Int { Self.byteCount(depth: depth, columns: columns) }
}

extension PackedGEMM {
    /// Whether products with a constant right operand should take the right-packed
    /// micro-kernel: its AVX-512 body runs (1.2–1.4× OpenBLAS's `SkylakeX` `sgemm`, packing
    /// included, on a transformer's linear layers, single-threaded); elsewhere OpenBLAS.
    package static let rightPackedIsPreferred: Bool = tessera_sgemm_packed_b_is_vectorized() != 0

    /// `c[i, j] = activation(clamp((Σ_k a[i, k] · B[k, firstColumn + j] + columnBias[j]) + residual[i, j]))`
    /// for `i < rows`, `j < columns`, sums in `k` order with FMA; `columnBias` and `residual`
    /// (`residualStride` floats between rows) are relative to the block's first row and column
    /// and optional, `activation` (optional) runs on each block of eight rows as soon as the
    /// kernel has written it.
    ///
    /// - Precondition: `firstColumn` is a multiple of ``PackedGEMMRightOperand/stripColumns``
    ///   and `firstColumn + columns ≤ b.columns`; `a` holds `rows` rows of `b.depth` floats
    ///   `lda` apart; `c` does not overlap `a`. Single-threaded.
    package static func multiply(
        rows: Int, a: UnsafePointer<Float>, lda: Int, _ b: PackedGEMMRightOperand, firstColumn: Int, columns: Int,
        c: UnsafeMutablePointer<Float>, ldc: Int, columnBias: UnsafePointer<Float>? = nil,
        residual: UnsafePointer<Float>? = nil, residualStride: Int = 0, clamp: ConvolutionClamp = .none,
        activation: LinearActivation? = nil
    ) {
        kernelPrecondition(
            firstColumn % PackedGEMMRightOperand.stripColumns == 0 && firstColumn >= 0
                && firstColumn + columns <= b.columns,
            "[gemm] columns \(firstColumn)..<\(firstColumn + columns) are not a strip-aligned block of \(b.columns)")
        let strips = b.strips + firstColumn * b.depth
        let code = activation?.code ?? Int32(TESSERA_ACTIVATION_NONE)
        if columnBias == nil && residual == nil && clamp.isIdentity {
            tessera_sgemm_packed_b_activated(rows, columns, b.depth, a, lda, strips, c, ldc, nil, code)
            return
        }
        let (lo, hi) = clamp.kernelBounds
        var epilogue = tessera_gemm_epilogue(bias: columnBias, residual: residual, ldr: residualStride, lo: lo, hi: hi)
        tessera_sgemm_packed_b_activated(rows, columns, b.depth, a, lda, strips, c, ldc, &epilogue, code)
    }

    /// `c = activation(clamp((a · B + columnBias) + residual))` over `rows` rows of `a` and all of B's columns
    /// (`residual`, optional, `residualStride` floats between rows), split
    /// into one block of output columns (a multiple of 16) or rows (a multiple of 8) per kernel
    /// thread when the product is large enough; one micro-kernel call per block.
    ///
    /// ```swift
    /// // y [128, 768] = x [128, 256] · Wᵀ
    /// PackedGEMM.product(rows: 128, a: x, lda: 256, packed, c: y, ldc: 768)
    /// ```
    ///
    /// - Precondition: As for
    ///   ``multiply(rows:a:lda:_:firstColumn:columns:c:ldc:columnBias:clamp:activation:)`` over the
    ///   whole operand. Runs multithreaded: do not call it from a `parallelFor` body.
    package static func product(
        rows m: Int, a: UnsafePointer<Float>, lda: Int, _ b: PackedGEMMRightOperand, c: UnsafeMutablePointer<Float>,
        ldc: Int, columnBias: UnsafePointer<Float>? = nil, residual: UnsafePointer<Float>? = nil,
        residualStride: Int = 0, clamp: ConvolutionClamp = .none, activation: LinearActivation? = nil
    ) {
        let n = b.columns
        if m == 0 || n == 0 { return }
        let (columnBlock, rowBlock) = rightPackedBlocks(
            rows: m, columns: n, depth: b.depth, budget: KernelThreads.coreBudget)
        let columnBlocks = (n + columnBlock - 1) / columnBlock
        let rowBlocks = (m + rowBlock - 1) / rowBlock
        let tasks = columnBlocks * rowBlocks
        if tasks == 1 {
            multiply(
                rows: m, a: a, lda: lda, b, firstColumn: 0, columns: n, c: c, ldc: ldc, columnBias: columnBias,
                residual: residual, residualStride: residualStride, clamp: clamp, activation: activation)
            return
        }
        let cost = rightPackedTaskNanoseconds(
            rows: Swift.min(rowBlock, m), columns: Swift.min(columnBlock, n), depth: b.depth)
        parallelFor(count: tasks, cost: .perItem(nanoseconds: cost)) { range in
            for index in range {
                let firstColumn = (index % columnBlocks) * columnBlock
                let firstRow = (index / columnBlocks) * rowBlock
                multiply(
                    rows: Swift.min(rowBlock, m - firstRow), a: a + firstRow * lda, lda: lda, b,
                    firstColumn: firstColumn, columns: Swift.min(columnBlock, n - firstColumn),
                    c: c + firstRow * ldc + firstColumn, ldc: ldc, columnBias: columnBias.map { $0 + firstColumn },
                    residual: residual.map { $0 + firstRow * residualStride + firstColumn },
                    residualStride: residualStride, clamp: clamp, activation: activation)
            }
        }
    }

    /// One block's estimated time on one core, in nanoseconds: its multiply-adds at ~50 per
    /// nanosecond or its strips of the weight streamed from memory at ~20 bytes per nanosecond,
    /// whichever is longer, plus ~0.2 µs per call. A product of few rows is bound by the weight:
    /// a classifier's `[1, 1280] · [1280, 1000]` counted by its arithmetic alone (26 µs) stayed
    /// below ``KernelThreads/serialThresholdNanoseconds`` and ran on one core, where streaming its
    /// 5 MB weight takes ~200 µs.
    static func rightPackedTaskNanoseconds(rows: Int, columns: Int, depth: Int) -> Double {
        let arithmetic = Double(rows) * Double(columns) * Double(depth) * 0.02
        let streaming = Double(columns) * Double(depth) * Double(MemoryLayout<Float>.stride) * 0.05
        return Swift.max(arithmetic, streaming) + 200
    }

    /// Columns and rows per block of a right-packed product: the whole product below ~1 M
    /// multiply-adds or with one thread; otherwise one block per thread, split along the columns
    /// (multiples of 16, each thread then reads only its part of the weight) when there are at
    /// least 32 columns per thread, along the rows (multiples of 8) otherwise.
    static func rightPackedBlocks(rows m: Int, columns n: Int, depth k: Int, budget: Int) -> (
        columns: Int, rows: Int
    ) {
        let whole = (Swift.max(1, n), Swift.max(1, m))
        guard budget > 1, m * n * k >= 1 << 20 else { return whole }
        if n >= 32 * budget {
            return (((n + budget - 1) / budget + 15) / 16 * 16, Swift.max(1, m))
        }
        guard m >= 16 else { return whole }
        let parts = Swift.min(budget, m / 8)
        return (Swift.max(1, n), ((m + parts - 1) / parts + 7) / 8 * 8)
    }
}
