/// How a BLAS call can read one matrix operand in place, or that it cannot.
///
/// BLAS (row-major) reads a `rows × cols` matrix either as stored row by row with leading
/// dimension `ld ≥ cols` (no transpose) or as the transpose of a `cols × rows` row-major
/// matrix with `ld ≥ rows`. Anything else — negative strides, stride-0 rows or columns,
/// overlapping rows — needs a contiguous copy first.
enum GEMMOperandMode: Equatable, Sendable {
    /// Row `i` starts `i * ld` elements in, its elements are adjacent.
    case noTranspose(ld: Int)
    /// Column `j` starts `j * ld` elements in, its elements are adjacent.
    case transpose(ld: Int)
    /// BLAS cannot read the strides; gather the matrix into a contiguous buffer.
    case copy

    /// The mode for a `rows × cols` matrix whose rows are `rowStride` and whose columns are
    /// `colStride` elements apart. Strides of dimensions of size 1 do not matter.
    static func classify(rows: Int, cols: Int, rowStride: Int, colStride: Int) -> GEMMOperandMode {
        let unitColumns = cols == 1 || colStride == 1
        let unitRows = rows == 1 || rowStride == 1
        if unitColumns && (rows == 1 || rowStride >= Swift.max(1, cols)) {
            return .noTranspose(ld: rows == 1 ? Swift.max(1, cols) : rowStride)
        }
        if unitRows && (cols == 1 || colStride >= Swift.max(1, rows)) {
            return .transpose(ld: cols == 1 ? Swift.max(1, rows) : colStride)
        }
        return .copy
    }
}

/// The shape arithmetic of one batched matmul: sizes, the broadcast batch, and where each
/// batch entry's matrices start.
struct MatmulPlan {
    /// Rows of the left operand and of the result.
    let m: Int
    /// Columns of the right operand and of the result.
    let n: Int
    /// The shared inner dimension.
    let k: Int
    /// The broadcast batch shape (empty for plain 2-D operands).
    let batchShape: [Int]
    /// For each batch entry (row-major over `batchShape`), the element offset of `A[b, 0, 0]`,
    /// `layout.offset` included.
    let aOffsets: [Int]
    /// The same for `B`.
    let bOffsets: [Int]
    /// Strides of `A` along `M` and `K`.
    let aRowStride: Int
    let aColStride: Int
    /// Strides of `B` along `K` and `N`.
    let bRowStride: Int
    let bColStride: Int

    /// The number of matrices in the batch.
    var batchCount: Int { aOffsets.count }
    /// The result shape, `batchShape + [m, n]`.
    var outputShape: [Int] { batchShape + [m, n] }
    /// The number of result elements.
    var outputCount: Int { batchCount * m * n }

    /// Validates the operands and works out the batch offsets.
    init(a: StridedLayout, b: StridedLayout) {
        kernelPrecondition(
            a.rank >= 2 && b.rank >= 2,
            "[matmul] operands must have rank 2 or more (promote vectors first): \(a.shape) vs \(b.shape)")
        kernelPrecondition(
            a.shape[a.rank - 1] == b.shape[b.rank - 2],
            "[matmul] inner dimensions differ: \(a.shape) vs \(b.shape)")
        m = a.shape[a.rank - 2]
        k = a.shape[a.rank - 1]
        n = b.shape[b.rank - 1]
        aRowStride = a.strides[a.rank - 2]
        aColStride = a.strides[a.rank - 1]
        bRowStride = b.strides[b.rank - 2]
        bColStride = b.strides[b.rank - 1]
        let aBatch = StridedLayout(
            shape: Array(a.shape.dropLast(2)), strides: Array(a.strides.dropLast(2)), offset: a.offset)
        let bBatch = StridedLayout(
            shape: Array(b.shape.dropLast(2)), strides: Array(b.strides.dropLast(2)), offset: b.offset)
        guard let batch = StridedLayout.broadcastShape(aBatch.shape, bBatch.shape) else {
            kernelFailure("[matmul] batch dimensions do not broadcast: \(a.shape) vs \(b.shape)")
        }
        batchShape = batch
        aOffsets = aBatch.broadcast(to: batch).elementOffsets()
        bOffsets = bBatch.broadcast(to: batch).elementOffsets()
    }
}
