/// A scalar the plain-loop matmul can accumulate: floats with ordinary arithmetic, integers
/// with wrapping arithmetic (the result of an overflowing integer matmul is the true result
/// modulo 2^bits, as in NumPy and PyTorch).
protocol LoopGEMMScalar {
    static var zero: Self { get }
    /// `accumulator + a * b`.
    static func multiplyAdd(_ accumulator: Self, _ a: Self, _ b: Self) -> Self
}

extension Float: LoopGEMMScalar {
    @inline(__always) static func multiplyAdd(_ c: Float, _ a: Float, _ b: Float) -> Float { c + a * b }
}

extension Double: LoopGEMMScalar {
    @inline(__always) static func multiplyAdd(_ c: Double, _ a: Double, _ b: Double) -> Double { c + a * b }
}

extension Int32: LoopGEMMScalar {
    @inline(__always) static func multiplyAdd(_ c: Int32, _ a: Int32, _ b: Int32) -> Int32 { c &+ a &* b }
}

extension UInt32: LoopGEMMScalar {
    @inline(__always) static func multiplyAdd(_ c: UInt32, _ a: UInt32, _ b: UInt32) -> UInt32 { c &+ a &* b }
}

extension Int16: LoopGEMMScalar {
    @inline(__always) static func multiplyAdd(_ c: Int16, _ a: Int16, _ b: Int16) -> Int16 { c &+ a &* b }
}

extension UInt16: LoopGEMMScalar {
    @inline(__always) static func multiplyAdd(_ c: UInt16, _ a: UInt16, _ b: UInt16) -> UInt16 { c &+ a &* b }
}

extension Int8: LoopGEMMScalar {
    @inline(__always) static func multiplyAdd(_ c: Int8, _ a: Int8, _ b: Int8) -> Int8 { c &+ a &* b }
}

extension UInt8: LoopGEMMScalar {
    @inline(__always) static func multiplyAdd(_ c: UInt8, _ a: UInt8, _ b: UInt8) -> UInt8 { c &+ a &* b }
}

/// The plain-loop batched matmul, for integer types and for batches of tiny float matrices
/// where a BLAS call per matrix costs more than the arithmetic.
enum LoopGEMM {
    /// Computes every result row of `plan` into the contiguous `output`, in parallel over the
    /// `batch × M` rows.
    ///
    /// The loop order is i-k-j: one row of `A` times the rows of `B`, accumulated into one
    /// result row, so the innermost loop streams along a row of `B` and of the result.
    static func matmul<T: LoopGEMMScalar>(
        a: UnsafePointer<T>, b: UnsafePointer<T>, plan: MatmulPlan, output: UnsafeMutablePointer<T>
    ) {
        let rowCount = plan.batchCount * plan.m
        let cost = ParallelCost.perItem(nanoseconds: Double(plan.n * Swift.max(plan.k, 1)) * 0.5 + 20)
        plan.aOffsets.withUnsafeBufferPointer { aOffsets in
            plan.bOffsets.withUnsafeBufferPointer { bOffsets in
                parallelFor(count: rowCount, cost: cost) { rows in
                    for row in rows {
                        computeRow(
                            row, a: a + aOffsets[row / plan.m], b: b + bOffsets[row / plan.m], plan: plan,
                            output: output + row * plan.n)
                    }
                }
            }
        }
    }

    /// One result row `c[i, :] = A[i, :] × B` for the batch entry whose matrices start at
    /// `a` and `b`.
    @inline(__always)
    static func computeRow<T: LoopGEMMScalar>(
        _ row: Int, a: UnsafePointer<T>, b: UnsafePointer<T>, plan: MatmulPlan, output c: UnsafeMutablePointer<T>
    ) {
        let n = plan.n
        let i = row % plan.m
        c.initialize(repeating: T.zero, count: n)
        let aRow = a + i * plan.aRowStride
        let bColStride = plan.bColStride
        for p in 0..<plan.k {
            let aip = aRow[p * plan.aColStride]
            let bRow = b + p * plan.bRowStride
            if bColStride == 1 {
                for j in 0..<n { c[j] = T.multiplyAdd(c[j], aip, bRow[j]) }
            } else {
                for j in 0..<n { c[j] = T.multiplyAdd(c[j], aip, bRow[j * bColStride]) }
            }
        }
    }
}
