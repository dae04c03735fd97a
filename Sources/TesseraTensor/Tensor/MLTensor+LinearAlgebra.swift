import TesseraGraph
import TesseraKernels

extension MLTensor {
    /// Returns the matrix product of this tensor and `other`.
    ///
    /// Shapes follow NumPy's `matmul`:
    /// - 1-D · 1-D: the dot product, shape `[]`.
    /// - 2-D × 1-D (`[m, k]` × `[k]`): a matrix-vector product, shape `[m]`.
    /// - 1-D × 2-D (`[k]` × `[k, n]`): shape `[n]`.
    /// - rank ≥ 2: batched products over the leading dimensions, which broadcast:
    ///   `[3, 1, 1, 4]` × `[4, 2]` → `[3, 1, 1, 2]`. A 1-D operand of a batched product is
    ///   treated as a matrix with a size-1 dimension that is then removed.
    ///
    /// Both tensors must have the same numeric scalar type; it is the result's type. Floating
    /// point runs on BLAS; integers accumulate exactly and wrap.
    ///
    /// ```swift
    /// let a = MLTensor(shape: [2, 3], scalars: [1, 2, 3, 4, 5, 6])
    /// let b = MLTensor(shape: [3, 2], scalars: [7, 8, 9, 10, 11, 12])
    /// a.matmul(b)   // [[58, 64], [139, 154]]
    /// ```
    ///
    /// - Precondition: Neither tensor is a scalar; the last dimension of `self` equals the
    ///   contracted dimension of `other`; batch dimensions broadcast; the scalar types match
    ///   and are not `Bool`. Otherwise the call traps, e.g.
    ///   `[matmul] inner dimensions differ: [2, 3] vs [4, 5]`.
    public func matmul(_ other: MLTensor) -> MLTensor {
        let (a, b) = (shape, other.shape)
        guard MLTensor.check(!a.isEmpty && !b.isEmpty, "[matmul] operands must have rank ≥ 1: \(a) vs \(b)") else {
            return placeholder
        }
        let inner = b.count == 1 ? b[0] : b[b.count - 2]
        guard MLTensor.check(a[a.count - 1] == inner, "[matmul] inner dimensions differ: \(a) vs \(b)") else {
            return placeholder
        }
        let lhs = a.count == 1 ? MLTensor(.reshape([1, a[0]]), [self]) : self
        let rhs = b.count == 1 ? MLTensor(.reshape([b[0], 1]), [other]) : other
        let product = MLTensor(.matmul, [lhs, rhs])
        guard a.count == 1 || b.count == 1 else { return product }
        var resultShape = product.shape
        if b.count == 1 { resultShape.removeLast() }
        if a.count == 1 { resultShape.remove(at: resultShape.count - (b.count == 1 ? 1 : 2)) }
        return MLTensor(.reshape(resultShape), [product])
    }

    /// Keeps a band around the diagonal of each innermost matrix and zeroes the rest.
    ///
    /// Element `[..., i, j]` is kept when
    /// `(lowerBandCount < 0 || i - j <= lowerBandCount) && (upperBandCount < 0 || j - i <= upperBandCount)`;
    /// a negative count keeps the whole triangle. Same shape and scalar type. The band mask is
    /// built lazily from two small index ranges and fuses into one select.
    ///
    /// ```swift
    /// let ones = MLTensor(ones: [3, 3], scalarType: Float.self)
    /// ones.bandPart(lowerBandCount: -1, upperBandCount: 0)   // lower triangle
    /// ones.bandPart(lowerBandCount: 0, upperBandCount: 0)    // diagonal
    /// ```
    ///
    /// - Precondition: The rank is at least 2.
    public func bandPart(lowerBandCount: Int, upperBandCount: Int) -> MLTensor {
        guard MLTensor.check(rank >= 2, "[bandPart] needs a tensor of rank ≥ 2, got shape \(shape)") else {
            return placeholder
        }
        let (m, n) = (shape[rank - 2], shape[rank - 1])
        // Indices in the tensor's own type when it holds them exactly, so the mask and the
        // select share one compute domain and fuse into a single program; int32 otherwise.
        let exact: Set<KernelScalarType> = [.float32, .float64, .int32]
        let indexType = exact.contains(kernelType) && Swift.max(m, n) < 1 << 24 ? kernelType : .int32
        let rows = MLTensor.indexRange(m, shape: [m, 1], type: indexType)
        let columns = MLTensor.indexRange(n, shape: [1, n], type: indexType)
        let below = rows - columns  // i - j
        var mask: MLTensor?
        if lowerBandCount >= 0 {
            mask = below .<= MLTensor.scalarConstant(Double(Swift.min(lowerBandCount, m)), type: indexType)
        }
        if upperBandCount >= 0 {
            let upper = below .>= MLTensor.scalarConstant(Double(-Swift.min(upperBandCount, n)), type: indexType)
            mask = mask.map { $0 .& upper } ?? upper
        }
        guard let mask else { return self }
        return MLTensor(.select, [mask, self, MLTensor.scalarConstant(0, type: kernelType)])
    }

    /// The constant `0, 1, …, count - 1` of `type`, laid out in `shape`.
    private static func indexRange(_ count: Int, shape: [Int], type: KernelScalarType) -> MLTensor {
        let values = (0..<count).map(Double.init)
        return MLTensor(shape: shape, kernelType: type) { pointer, _ in
            values.withUnsafeBytes { source in
                ScalarConversion.convert(source.baseAddress!, from: .float64, into: pointer, to: type, count: count)
            }
        }
    }
}
