import CTesseraSIMD

/// Scaled dot-product attention as one fused kernel: `softmax(scale · q · kᵀ + mask) · v` for
/// every head, without storing the score matrix.
///
/// Each head runs `tessera_attention_f32` (`CTesseraSIMD/CTesseraAttention.c`): query rows in
/// blocks of 32, keys in blocks of 128, a running maximum and sum per row (the online softmax of
/// flash attention), so memory beyond the output is 32 × 128 scores and one block of keys or
/// queries per task, whatever the sequence length. AVX-512 body when the CPU has it, else an
/// AVX2 + FMA body, else a scalar loop with the same blocking.
package enum AttentionKernels {
    /// Whether the AVX-512 body runs (AVX-512F and AVX2 + FMA, `TESSERA_NO_AVX512` unset).
    package static let isVectorized: Bool = tessera_attention_is_vectorized() != 0

    /// Which body of the kernel runs (for tests of each).
    package enum Body: Sendable, CaseIterable {
        /// The scalar loop.
        case scalar
        /// The AVX2 + FMA body (the scalar loop on CPUs without AVX2 + FMA).
        case avx2
        /// The best body the CPU has: AVX-512, else AVX2 + FMA, else scalar.
        case best

        /// The `vectorized` argument of `tessera_attention_f32_variant`.
        var code: Int32 {
            switch self {
            case .scalar: 0
            case .best: 1
            case .avx2: 2
            }
        }
    }

    /// Writes `out [batch…, L, Ev]` (row-major) = `softmax(scale · q · kᵀ + mask) · v`, with
    /// `q [batch…, L, E]`, `k [batch…, S, E]`, `v [batch…, S, Ev]` read through their layouts
    /// (already broadcast to the output's batch dimensions; the last axis unit-strided) and a
    /// float32 `mask` broadcast to `[batch…, L, S]` whose last axis is unit-strided or
    /// broadcast. A row whose every score is `-infinity` gives NaN, as PyTorch does.
    ///
    /// Heads (and, when there are fewer heads than four per thread, blocks of 32 query rows)
    /// are split across the kernel threads.
    ///
    /// ```swift
    /// // 4 heads of 128 tokens, depth 64
    /// AttentionKernels.attention(query: q, queryLayout: ql, key: k, keyLayout: kl, value: v,
    ///                            valueLayout: vl, mask: nil, maskLayout: nil, scale: 0.125, output: out)
    /// ```
    ///
    /// - Parameter body: The body to run (for tests of each); ``Body/best`` otherwise.
    /// - Precondition: Shapes as above; the mask's row stride is below 2²⁶.
    package static func attention(
        query: UnsafeRawPointer, queryLayout: StridedLayout, key: UnsafeRawPointer, keyLayout: StridedLayout,
        value: UnsafeRawPointer, valueLayout: StridedLayout, mask: UnsafeRawPointer?, maskLayout: StridedLayout?,
        scale: Float, output: UnsafeMutablePointer<Float>, body: Body = .best
    ) {
        let rank = queryLayout.rank
        kernelPrecondition(
            rank >= 2 && keyLayout.rank == rank && valueLayout.rank == rank,
            "[attention] query \(queryLayout.shape), key \(keyLayout.shape), value \(valueLayout.shape) need one rank ≥ 2"
        )
        let batchShape = Array(queryLayout.shape.dropLast(2))
        let (l, e) = (queryLayout.shape[rank - 2], queryLayout.shape[rank - 1])
        let (s, ev) = (keyLayout.shape[rank - 2], valueLayout.shape[rank - 1])
        kernelPrecondition(
            Array(keyLayout.shape.dropLast(2)) == batchShape && Array(valueLayout.shape.dropLast(2)) == batchShape
                && keyLayout.shape[rank - 1] == e && valueLayout.shape[rank - 2] == s,
            "[attention] query \(queryLayout.shape), key \(keyLayout.shape), value \(valueLayout.shape) do not fit")
        for layout in [queryLayout, keyLayout, valueLayout] {
            kernelPrecondition(
                layout.shape[rank - 1] <= 1 || layout.strides[rank - 1] == 1,
                "[attention] operand \(layout) is not unit-strided along its last axis")
        }
        var maskStrides: (batch: [Int], row: Int, column: Int)?
        if let maskLayout {
            kernelPrecondition(
                maskLayout.shape == batchShape + [l, s],
                "[attention] mask \(maskLayout.shape) is not broadcast to the scores \(batchShape + [l, s])")
            let column = s <= 1 ? 0 : maskLayout.strides[rank - 1]
            let row = l <= 1 ? 0 : maskLayout.strides[rank - 2]
            kernelPrecondition(
                (column == 0 || column == 1) && row >= 0 && row < 1 << 26,
                "[attention] mask \(maskLayout) needs a unit or broadcast last axis and a small row stride")
            maskStrides = (Array(maskLayout.strides.dropLast(2)), row, column)
        }
        let heads = batchShape.reduce(1, *)
        if heads == 0 || l == 0 || ev == 0 { return }

        // Element offsets of head `h` in each operand, through its batch strides.
        func offset(_ h: Int, _ strides: ArraySlice<Int>, base: Int) -> Int {
            var rest = h
            var result = base
            for axis in stride(from: batchShape.count - 1, through: 0, by: -1) {
                let size = batchShape[axis]
                result += (rest % size) * strides[strides.startIndex + axis]
                rest /= size
            }
            return result
        }
        let q = query.assumingMemoryBound(to: Float.self)
        let k = key.assumingMemoryBound(to: Float.self)
        let v = value.assumingMemoryBound(to: Float.self)
        let m = mask?.assumingMemoryBound(to: Float.self)
        let rowBlock = 32
        let budget = KernelThreads.coreBudget
        // Enough tasks for every thread: whole heads when there are four per thread, else
        // blocks of rows (multiples of 32).
        let rowsPerTask: Int
        if heads >= 4 * budget || budget == 1 {
            rowsPerTask = l
        } else {
            let parts = Swift.max(1, Swift.min((4 * budget + heads - 1) / heads, (l + rowBlock - 1) / rowBlock))
            rowsPerTask = ((l + parts - 1) / parts + rowBlock - 1) / rowBlock * rowBlock
        }
        let blocksPerHead = (l + rowsPerTask - 1) / rowsPerTask
        let flops = 2.0 * Double(l) * Double(s) * Double(e + ev) / Double(blocksPerHead)
        let scratchCount = tessera_attention_scratch_count(e, ev)
        let (ldq, ldk, ldv) = (
            queryLayout.strides[rank - 2], keyLayout.strides[rank - 2], valueLayout.strides[rank - 2]
        )
        parallelFor(count: heads * blocksPerHead, cost: .perItem(nanoseconds: flops * 0.015 + 500)) { range in
            ThreadScratch.withFloats(count: scratchCount) { scratch in
                for task in range {
                    let h = task / blocksPerHead
                    let firstRow = (task % blocksPerHead) * rowsPerTask
                    let qOffset = offset(h, queryLayout.strides.dropLast(2), base: queryLayout.offset)
                    let kOffset = offset(h, keyLayout.strides.dropLast(2), base: keyLayout.offset)
                    let vOffset = offset(h, valueLayout.strides.dropLast(2), base: valueLayout.offset)
                    var maskPointer: UnsafePointer<Float>?
                    if let m, let maskStrides, let maskLayout {
                        maskPointer = m + offset(h, maskStrides.batch[...], base: maskLayout.offset)
                    }
                    var head = tessera_attention_head(
                        L: l, S: s, E: e, Ev: ev, q: q + qOffset, ldq: ldq, k: k + kOffset, ldk: ldk, v: v + vOffset,
                        ldv: ldv, mask: maskPointer, ldm: maskStrides?.row ?? 0,
                        mask_column_stride: maskStrides?.column ?? 0, scale: scale, out: output + h * l * ev, ldo: ev)
                    tessera_attention_f32_variant(
                        body.code, &head, firstRow, Swift.min(rowsPerTask, l - firstRow), scratch)
                }
            }
        }
    }
}
