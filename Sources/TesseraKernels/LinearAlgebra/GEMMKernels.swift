import COpenBLAS

/// Matrix multiplication: batched `matmul` over strided operands of any scalar type, and thin
/// row-major wrappers over OpenBLAS's `sgemm` and `dgemm`.
///
/// Float32 and Float64 go to OpenBLAS, which is multithreaded on its own (its thread count
/// is the kernel layer's core budget, see ``KernelThreads``). Operands are read in place
/// whenever their last two strides let BLAS do so with a transpose flag; only layouts BLAS
/// cannot express (negative strides, stride-0 rows or columns) are copied. Float16 is
/// computed in Float32 and rounded back once; integer types use a plain loop with wrapping
/// arithmetic.
///
/// ```swift
/// // [2, 3] × [3, 4] → [2, 4], Float32, B read transposed from a [4, 3] buffer
/// let bT = StridedLayout(contiguous: [4, 3]).permuted([1, 0])
/// GEMMKernels.matmul(a: aPointer, aLayout: StridedLayout(contiguous: [2, 3]),
///                    b: bPointer, bLayout: bT, type: .float32, output: outPointer)
/// ```
package enum GEMMKernels {
    /// Matrices with at most this many multiply-adds, in batches of at least
    /// ``smallBatchMinimum``, are computed by a loop parallel over the batch instead of one
    /// BLAS call each: a call costs about a microsecond before any arithmetic.
    static let smallMatrixMultiplyAdds = 4096
    /// See ``smallMatrixMultiplyAdds``.
    static let smallBatchMinimum = 8

    /// Multiplies two batched matrices with NumPy / `torch.matmul` rules for rank ≥ 2 operands.
    ///
    /// `[..., M, K] × [..., K, N] → [broadcast(batch), M, N]`: the leading (batch) dimensions
    /// broadcast against each other like element-wise operands; either layout may already
    /// carry stride-0 batch dimensions. The result is written contiguously (row-major) to
    /// `output`, which must hold `batchCount × M × N` elements of `type`. When `K` is 0 the
    /// result is all zeros.
    ///
    /// ```swift
    /// // [2, 1, 3, 4] × [5, 4, 6] → [2, 5, 3, 6]
    /// GEMMKernels.matmul(a: a, aLayout: StridedLayout(contiguous: [2, 1, 3, 4]),
    ///                    b: b, bLayout: StridedLayout(contiguous: [5, 4, 6]),
    ///                    type: .float32, output: out)
    /// ```
    ///
    /// - Parameters:
    ///   - a: Base pointer of the left operand; elements sit at `aLayout`'s positions.
    ///   - aLayout: Shape `[..., M, K]` and strides (in elements, any sign) of the left operand.
    ///   - b: Base pointer of the right operand.
    ///   - bLayout: Shape `[..., K, N]` and strides of the right operand.
    ///   - type: The scalar type of both operands and of the result.
    ///   - output: Contiguous destination for the `[batch..., M, N]` result.
    /// - Precondition: Both operands have rank ≥ 2 (vector promotion is the caller's job),
    ///   their inner dimensions agree, their batch dimensions broadcast, the type is not
    ///   `bool`, and every dimension fits in a 32-bit BLAS integer.
    /// - Note: Float16 operands are widened to Float32 temporaries and the result rounded
    ///   once; strided operands BLAS cannot read are copied. Temporaries come from
    ///   ``BufferPool/shared`` and fall back to an unpooled allocation if the pool refuses.
    package static func matmul(
        a: UnsafeRawPointer, aLayout: StridedLayout, b: UnsafeRawPointer, bLayout: StridedLayout,
        type: KernelScalarType, output: UnsafeMutableRawPointer
    ) {
        let plan = MatmulPlan(a: aLayout, b: bLayout)
        kernelPrecondition(
            plan.m <= Int(Int32.max) && plan.n <= Int(Int32.max) && plan.k <= Int(Int32.max),
            "[matmul] dimensions exceed the 32-bit BLAS range: \(aLayout.shape) vs \(bLayout.shape)")
        let count = plan.outputCount
        if count == 0 { return }
        if plan.k == 0 {
            output.initializeMemory(as: UInt8.self, repeating: 0, count: count * type.byteCount)
            return
        }
        switch type {
        case .float32:
            floatingMatmul(
                a: a.assumingMemoryBound(to: Float.self), b: b.assumingMemoryBound(to: Float.self),
                plan: plan, output: output.assumingMemoryBound(to: Float.self))
        case .float64:
            floatingMatmul(
                a: a.assumingMemoryBound(to: Double.self), b: b.assumingMemoryBound(to: Double.self),
                plan: plan, output: output.assumingMemoryBound(to: Double.self))
        case .float16:
            halfMatmul(a: a, aLayout: aLayout, b: b, bLayout: bLayout, plan: plan, output: output)
        case .int32: loop(Int32.self, a, b, plan, output)
        case .uint32: loop(UInt32.self, a, b, plan, output)
        case .int16: loop(Int16.self, a, b, plan, output)
        case .uint16: loop(UInt16.self, a, b, plan, output)
        case .int8: loop(Int8.self, a, b, plan, output)
        case .uint8: loop(UInt8.self, a, b, plan, output)
        case .bool:
            kernelFailure("[matmul] bool operands are not supported: \(aLayout.shape) vs \(bLayout.shape)")
        }
    }

    /// Row-major `C = alpha · op(A) · op(B) + beta · C` in Float32, where `op(X)` is `X` or
    /// its transpose.
    ///
    /// `op(A)` is `m × k`, `op(B)` is `k × n`, `C` is `m × n` with row stride `ldc`. A matrix
    /// passed with `transpose…: true` is read from a row-major buffer of the transposed shape
    /// (`k × m` for `A`), so its leading dimension is at least that shape's column count.
    /// Runs multithreaded inside OpenBLAS: never call it from a ``parallelFor(count:cost:alignment:_:)``
    /// body. With `k == 0` the result is `beta · C` (zeros when `beta` is 0, whatever `C` held).
    ///
    /// ```swift
    /// // C[4×5] = A[4×3] × B[3×5] + bias already in C
    /// GEMMKernels.sgemm(transposeA: false, transposeB: false, m: 4, n: 5, k: 3,
    ///                   alpha: 1, a: a, lda: 3, b: b, ldb: 5, beta: 1, c: c, ldc: 5)
    /// ```
    ///
    /// - Precondition: Sizes are non-negative and fit in 32 bits; each leading dimension is
    ///   at least 1 and at least the column count of the matrix as stored.
    package static func sgemm(
        transposeA: Bool, transposeB: Bool, m: Int, n: Int, k: Int, alpha: Float,
        a: UnsafePointer<Float>, lda: Int, b: UnsafePointer<Float>, ldb: Int, beta: Float,
        c: UnsafeMutablePointer<Float>, ldc: Int
    ) {
        Float.gemm(
            transposeA: transposeA, transposeB: transposeB, m: m, n: n, k: k, alpha: alpha, a: a, lda: lda,
            b: b, ldb: ldb, beta: beta, c: c, ldc: ldc)
    }

    /// Row-major `C = alpha · op(A) · op(B) + beta · C` in Float64; the same contract as
    /// ``sgemm(transposeA:transposeB:m:n:k:alpha:a:lda:b:ldb:beta:c:ldc:)``.
    ///
    /// ```swift
    /// GEMMKernels.dgemm(transposeA: true, transposeB: false, m: 4, n: 5, k: 3,
    ///                   alpha: 1, a: aT, lda: 4, b: b, ldb: 5, beta: 0, c: c, ldc: 5)
    /// ```
    ///
    /// - Precondition: As for `sgemm`.
    package static func dgemm(
        transposeA: Bool, transposeB: Bool, m: Int, n: Int, k: Int, alpha: Double,
        a: UnsafePointer<Double>, lda: Int, b: UnsafePointer<Double>, ldb: Int, beta: Double,
        c: UnsafeMutablePointer<Double>, ldc: Int
    ) {
        Double.gemm(
            transposeA: transposeA, transposeB: transposeB, m: m, n: n, k: k, alpha: alpha, a: a, lda: lda,
            b: b, ldb: ldb, beta: beta, c: c, ldc: ldc)
    }

    // MARK: - Paths

    private static func loop<T: LoopGEMMScalar>(
        _: T.Type, _ a: UnsafeRawPointer, _ b: UnsafeRawPointer, _ plan: MatmulPlan,
        _ output: UnsafeMutableRawPointer
    ) {
        LoopGEMM.matmul(
            a: a.assumingMemoryBound(to: T.self), b: b.assumingMemoryBound(to: T.self), plan: plan,
            output: output.assumingMemoryBound(to: T.self))
    }

    /// Float32 / Float64: one BLAS call per batch entry, or the loop for many tiny matrices.
    static func floatingMatmul<T: BLASScalar & LoopGEMMScalar>(
        a: UnsafePointer<T>, b: UnsafePointer<T>, plan: MatmulPlan, output: UnsafeMutablePointer<T>
    ) {
        let (m, n, k) = (plan.m, plan.n, plan.k)
        if plan.batchCount >= smallBatchMinimum && m * n * k <= smallMatrixMultiplyAdds {
            LoopGEMM.matmul(a: a, b: b, plan: plan, output: output)
            return
        }
        let aMode = GEMMOperandMode.classify(rows: m, cols: k, rowStride: plan.aRowStride, colStride: plan.aColStride)
        let bMode = GEMMOperandMode.classify(rows: k, cols: n, rowStride: plan.bRowStride, colStride: plan.bColStride)
        let aCopy = aMode == .copy ? temporary(T.self, count: m * k) : nil
        let bCopy = bMode == .copy ? temporary(T.self, count: k * n) : nil
        for batch in 0..<plan.batchCount {
            let aStart = a + plan.aOffsets[batch]
            let bStart = b + plan.bOffsets[batch]
            let (aPointer, aTransposed, lda) = operand(
                aStart, mode: aMode, rows: m, cols: k, rowStride: plan.aRowStride, colStride: plan.aColStride,
                scratch: aCopy)
            let (bPointer, bTransposed, ldb) = operand(
                bStart, mode: bMode, rows: k, cols: n, rowStride: plan.bRowStride, colStride: plan.bColStride,
                scratch: bCopy)
            T.gemm(
                transposeA: aTransposed, transposeB: bTransposed, m: m, n: n, k: k, alpha: 1, a: aPointer,
                lda: lda, b: bPointer, ldb: ldb, beta: 0, c: output + batch * m * n, ldc: n)
        }
    }

    /// What to hand BLAS for one operand: the pointer, whether it is transposed, its `ld`.
    @inline(__always)
    private static func operand<T>(
        _ start: UnsafePointer<T>, mode: GEMMOperandMode, rows: Int, cols: Int, rowStride: Int, colStride: Int,
        scratch: AlignedBuffer?
    ) -> (UnsafePointer<T>, Bool, Int) {
        switch mode {
        case .noTranspose(let ld): return (start, false, ld)
        case .transpose(let ld): return (start, true, ld)
        case .copy:
            let destination = scratch!.typedPointer(T.self)
            for i in 0..<rows {
                let source = start + i * rowStride
                let row = destination + i * cols
                for j in 0..<cols { row[j] = source[j * colStride] }
            }
            return (UnsafePointer(destination), false, Swift.max(1, cols))
        }
    }

    /// Float16: widen each operand's touched range to Float32, multiply there, round back.
    private static func halfMatmul(
        a: UnsafeRawPointer, aLayout: StridedLayout, b: UnsafeRawPointer, bLayout: StridedLayout,
        plan: MatmulPlan, output: UnsafeMutableRawPointer
    ) {
        let (aWide, aShift) = widened(a.assumingMemoryBound(to: Float16.self), aLayout)
        let (bWide, bShift) = widened(b.assumingMemoryBound(to: Float16.self), bLayout)
        var aShifted = aLayout
        aShifted.offset -= aShift
        var bShifted = bLayout
        bShifted.offset -= bShift
        let count = plan.outputCount
        let result = temporary(Float.self, count: count)
        floatingMatmul(
            a: UnsafePointer(aWide.typedPointer(Float.self)), b: UnsafePointer(bWide.typedPointer(Float.self)),
            plan: MatmulPlan(a: aShifted, b: bShifted), output: result.typedPointer(Float.self))
        convert(
            UnsafePointer(result.typedPointer(Float.self)), to: output.assumingMemoryBound(to: Float16.self),
            count: count)
    }

    /// The elements between the lowest and highest position `layout` touches, as Float32,
    /// and that lowest position.
    private static func widened(_ source: UnsafePointer<Float16>, _ layout: StridedLayout) -> (AlignedBuffer, Int) {
        let range = layout.elementRange!
        let count = range.count
        let buffer = temporary(Float.self, count: count)
        convert(source + range.lowerBound, to: buffer.typedPointer(Float.self), count: count)
        return (buffer, range.lowerBound)
    }

    private static func convert<S: BinaryFloatingPoint, D: BinaryFloatingPoint>(
        _ source: UnsafePointer<S>, to destination: UnsafeMutablePointer<D>, count: Int
    ) {
        parallelFor(count: count, cost: .elementwise, alignment: 64) { range in
            for i in range { destination[i] = D(source[i]) }
        }
    }

    /// A scratch buffer of `count` elements: from the shared pool, or unpooled if the pool's
    /// memory limit refuses (a kernel has no way to report the error, and the caller already
    /// holds the operands this temporary mirrors).
    static func temporary<T>(_: T.Type, count: Int) -> AlignedBuffer {
        let bytes = count * MemoryLayout<T>.stride
        return (try? BufferPool.shared.allocate(byteCount: bytes)) ?? AlignedBuffer(unpooledByteCount: bytes)
    }
}

/// A floating-point type OpenBLAS multiplies: `Float` (sgemm) and `Double` (dgemm).
protocol BLASScalar: FloatingPoint {
    /// One single-threaded row-major BLAS GEMM call (`cblas_sgemm` / `cblas_dgemm`).
    static func blasGEMM(
        _ transposeA: Bool, _ transposeB: Bool, _ m: Int, _ n: Int, _ k: Int, _ alpha: Self, _ a: UnsafePointer<Self>,
        _ lda: Int, _ b: UnsafePointer<Self>, _ ldb: Int, _ beta: Self, _ c: UnsafeMutablePointer<Self>, _ ldc: Int)
}

extension BLASScalar {
    /// Row-major GEMM; see ``GEMMKernels/sgemm(transposeA:transposeB:m:n:k:alpha:a:lda:b:ldb:beta:c:ldc:)``.
    static func gemm(
        transposeA: Bool, transposeB: Bool, m: Int, n: Int, k: Int, alpha: Self, a: UnsafePointer<Self>,
        lda: Int, b: UnsafePointer<Self>, ldb: Int, beta: Self, c: UnsafeMutablePointer<Self>, ldc: Int
    ) {
        guard
            prepareGEMM(
                transposeA: transposeA, transposeB: transposeB, m: m, n: n, k: k, lda: lda, ldb: ldb, beta: beta,
                c: c, ldc: ldc)
        else { return }
        partitionedGEMM(
            transposeA: transposeA, transposeB: transposeB, m: m, n: n, k: k, a: a, lda: lda, b: b, ldb: ldb, c: c,
            ldc: ldc
        ) { m, n, a, b, c in
            blasGEMM(transposeA, transposeB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
        }
    }
}

/// Checks a GEMM call's sizes and handles the cases BLAS implementations disagree on.
/// Returns `false` when the call is already complete.
@inline(__always)
private func prepareGEMM<T: FloatingPoint>(
    transposeA: Bool, transposeB: Bool, m: Int, n: Int, k: Int, lda: Int, ldb: Int, beta: T,
    c: UnsafeMutablePointer<T>, ldc: Int
) -> Bool {
    kernelPrecondition(
        m >= 0 && n >= 0 && k >= 0 && m <= Int(Int32.max) && n <= Int(Int32.max) && k <= Int(Int32.max),
        "[gemm] invalid sizes m \(m), n \(n), k \(k)")
    kernelPrecondition(lda >= Swift.max(1, transposeA ? m : k), "[gemm] lda \(lda) too small for m \(m), k \(k)")
    kernelPrecondition(ldb >= Swift.max(1, transposeB ? k : n), "[gemm] ldb \(ldb) too small for k \(k), n \(n)")
    kernelPrecondition(ldc >= Swift.max(1, n), "[gemm] ldc \(ldc) too small for n \(n)")
    if m == 0 || n == 0 { return false }
    if k == 0 {
        for i in 0..<m {
            let row = c + i * ldc
            for j in 0..<n { row[j] = beta == 0 ? 0 : beta * row[j] }
        }
        return false
    }
    return true
}

/// Splits one GEMM into row (or column) blocks of C and runs a single-threaded BLAS call per
/// block on the kernel layer's threads.
///
/// OpenBLAS is kept single-threaded (see ``KernelThreads``): its own worker threads busy-wait
/// with `sched_yield` for about a tenth of a second after every multithreaded call, which took
/// a core away from the element-wise kernels that follow a matrix product. Splitting here
/// costs one extra packing of the shared operand per block and keeps every core ours.
private func partitionedGEMM<T>(
    transposeA: Bool, transposeB: Bool, m: Int, n: Int, k: Int, a: UnsafePointer<T>, lda: Int,
    b: UnsafePointer<T>, ldb: Int, c: UnsafeMutablePointer<T>, ldc: Int,
    _ call: (Int, Int, UnsafePointer<T>, UnsafePointer<T>, UnsafeMutablePointer<T>) -> Void
) {
    let budget = KernelThreads.coreBudget
    let work = Double(m) * Double(n) * Double(k)
    // Below about 2 MFLOP a split costs more than it saves.
    guard budget > 1, work >= 1_000_000 else {
        call(m, n, a, b, c)
        return
    }
    let alongRows = m >= n || n < 32
    let extent = alongRows ? m : n
    let parts = Swift.min(budget, Swift.max(1, extent / 16))
    guard parts > 1 else {
        call(m, n, a, b, c)
        return
    }
    // Blocks are multiples of 16 rows/columns (the BLAS micro-kernels' natural steps).
    let block = ((extent + parts - 1) / parts + 15) / 16 * 16
    let blocks = (extent + block - 1) / block
    parallelFor(count: blocks, cost: .perItem(nanoseconds: work / Double(blocks) * 0.02)) { range in
        for index in range {
            let start = index * block
            let size = Swift.min(block, extent - start)
            if alongRows {
                call(size, n, a + (transposeA ? start : start * lda), b, c + start * ldc)
            } else {
                call(m, size, a, b + (transposeB ? start * ldb : start), c + start)
            }
        }
    }
}

extension Float: BLASScalar {
    static func blasGEMM(
        _ transposeA: Bool, _ transposeB: Bool, _ m: Int, _ n: Int, _ k: Int, _ alpha: Float, _ a: UnsafePointer<Float>,
        _ lda: Int, _ b: UnsafePointer<Float>, _ ldb: Int, _ beta: Float, _ c: UnsafeMutablePointer<Float>, _ ldc: Int
    ) {
        OpenBLASLibrary.shared.callSgemm(transposeA, transposeB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
    }
}

extension Double: BLASScalar {
    static func blasGEMM(
        _ transposeA: Bool, _ transposeB: Bool, _ m: Int, _ n: Int, _ k: Int, _ alpha: Double,
        _ a: UnsafePointer<Double>, _ lda: Int, _ b: UnsafePointer<Double>, _ ldb: Int, _ beta: Double,
        _ c: UnsafeMutablePointer<Double>, _ ldc: Int
    ) {
        OpenBLASLibrary.shared.callDgemm(transposeA, transposeB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
    }
}
