import CTesseraSIMD

/// The left operand of a GEMM packed into the micro-kernel's panels: rows in groups of 8
/// (``TESSERA_GEMM_PANEL_ROWS``), each group stored `k`-major so the kernel reads it as one
/// sequential stream, rows past `rows` as zeros.
///
/// A convolution's or linear layer's constant weight is packed once and kept (see
/// ``PreparedWeights``); ``PackedGEMM/multiply(_:firstRow:rows:columns:b:ldb:c:ldc:epilogue:)``
/// runs any block of its rows (starting at a multiple of 8) against a row-major right operand.
///
/// ```swift
/// // W [64, 144] (a pointwise convolution's weight) packed once
/// let packed = PackedGEMMOperand(packing: w, lda: 144, rows: 64, depth: 144)
/// ```
package final class PackedGEMMOperand: @unchecked Sendable {
    // `@unchecked`: the panels are written once, in the initializer, and only read afterwards.
    /// `m`, the operand's rows.
    package let rows: Int
    /// `k`, the operand's columns (the product's inner dimension).
    package let depth: Int
    /// The panels' first float: in `owner`'s allocation, or in memory it keeps alive.
    private let start: UnsafePointer<Float>
    /// What keeps the panels' memory alive: their ``AlignedBuffer``, or the owner of borrowed
    /// memory (a compiled model's mapped file).
    private let owner: AnyObject

    /// Rows per panel.
    package static let panelRows = Int(TESSERA_GEMM_PANEL_ROWS)

    /// Packs the `rows × depth` row-major matrix at `a` (row stride `lda ≥ depth`).
    ///
    /// - Precondition: `rows ≥ 0`, `depth ≥ 0`, `lda ≥ depth`.
    package init(packing a: UnsafePointer<Float>, lda: Int, rows: Int, depth: Int) {
        kernelPrecondition(
            rows >= 0 && depth >= 0 && lda >= depth, "[gemm] cannot pack \(rows)×\(depth) with lda \(lda)")
        self.rows = rows
        self.depth = depth
        let buffer = AlignedBuffer(unpooledByteCount: Self.byteCount(rows: rows, depth: depth))
        tessera_sgemm_pack(a, lda, rows, depth, buffer.typedPointer(Float.self))
        start = UnsafePointer(buffer.typedPointer(Float.self))
        owner = buffer
    }

    /// Panels already packed, read in place from memory `keepAlive` keeps alive (a compiled
    /// model's stored form, ``PreparedWeights/register(_:base:keepAlive:)``).
    ///
    /// - Precondition: `panels` holds ``byteCount(rows:depth:)`` bytes, 64-byte aligned, that
    ///   nobody writes while `keepAlive` lives.
    package init(borrowing panels: UnsafePointer<Float>, rows: Int, depth: Int, keepAlive: AnyObject) {
        kernelPrecondition(rows >= 0 && depth >= 0, "[gemm] cannot borrow \(rows)×\(depth) panels")
        self.rows = rows
        self.depth = depth
        start = panels
        owner = keepAlive
    }

    /// The bytes the packed form of a `rows × depth` operand takes.
    package static func byteCount(rows: Int, depth: Int) -> Int {
        Swift.max(1, tessera_sgemm_packed_count(rows, depth)) * MemoryLayout<Float>.stride
    }

    /// The panels.
    package var panels: UnsafePointer<Float> { start }

    /// The bytes the panels take.
    package var byteCount: Int { Self.byteCount(rows: rows, depth: depth) }
}

/// The micro-kernel over a ``PackedGEMMOperand``: `C = epilogue(A · B)` for a block of A's rows
/// and a row-major `B`, with the convolution epilogue (bias per row, residual, clamp) applied
/// to each tile in registers before it is stored.
package enum PackedGEMM {
    /// Whether this CPU runs the micro-kernel (AVX2 + FMA; AVX-512 when present).
    package static var isAvailable: Bool { SIMDMath.hasAVX2FMA }

    /// Whether convolutions should take the micro-kernel rather than OpenBLAS: with the AVX-512
    /// body. The AVX2 body (4 × 24 tiles) runs at ~0.7× OpenBLAS's Haswell kernels on the
    /// pointwise shapes of MobileNetV2 and ResNet-50, so AVX2-only CPUs keep OpenBLAS.
    package static let isPreferred: Bool = isAvailable && tessera_sgemm_has_avx512() != 0

    /// `c[i, j] = clamp((Σ_k A[firstRow + i, k] · b[k, j] + bias[i]) + residual[i, j])` for
    /// `i < rows`, `j < columns`; sums in `k` order with FMA. `bias`, `residual` (row stride
    /// `residualStride`) are relative to the block's first row and column, and each optional.
    ///
    /// ```swift
    /// PackedGEMM.multiply(packed, firstRow: 0, rows: 64, columns: 3136, b: x, ldb: 3136,
    ///                     c: y, ldc: 3136, bias: b, clamp: .relu6)
    /// ```
    ///
    /// - Precondition: ``isAvailable``; `firstRow` is a multiple of ``PackedGEMMOperand/panelRows``
    ///   and `firstRow + rows ≤ a.rows`; `b` holds `a.depth` rows of `columns` floats `ldb`
    ///   apart; `c` does not overlap `b` or the residual. Single-threaded.
    package static func multiply(
        _ a: PackedGEMMOperand, firstRow: Int, rows: Int, columns: Int, b: UnsafePointer<Float>, ldb: Int,
        c: UnsafeMutablePointer<Float>, ldc: Int, bias: UnsafePointer<Float>? = nil,
        residual: UnsafePointer<Float>? = nil, residualStride: Int = 0, clamp: ConvolutionClamp = .none
    ) {
        kernelPrecondition(
            firstRow % PackedGEMMOperand.panelRows == 0 && firstRow >= 0 && firstRow + rows <= a.rows,
            "[gemm] rows \(firstRow)..<\(firstRow + rows) are not a panel-aligned block of \(a.rows)")
        let panels = a.panels + firstRow * a.depth
        if bias == nil && residual == nil && clamp.isIdentity {
            tessera_sgemm_packed(panels, rows, columns, a.depth, b, ldb, c, ldc, nil)
            return
        }
        let (lo, hi) = clamp.kernelBounds
        var epilogue = tessera_gemm_epilogue(bias: bias, residual: residual, ldr: residualStride, lo: lo, hi: hi)
        tessera_sgemm_packed(panels, rows, columns, a.depth, b, ldb, c, ldc, &epilogue)
    }
}
