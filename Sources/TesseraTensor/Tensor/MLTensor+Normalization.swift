import TesseraGraph
import TesseraKernels

// Tessera extensions: statistics and normalisations that Core ML's MLTensor lacks.

extension MLTensor {
    /// Returns the population variance (`mean((x - mean(x))²)`, NumPy's default) of all elements.
    ///
    /// **Tessera extension** (a compatibility shim: code written against Core ML often calls it).
    ///
    /// ```swift
    /// MLTensor([1, 2, 3, 4] as [Float]).variance()   // 1.25
    /// ```
    public func variance(keepRank: Bool = false) -> MLTensor {
        variance(alongAxes: Array(0..<rank), keepRank: keepRank)
    }

    /// Returns the population variance along the given axes.
    ///
    /// **Tessera extension.**
    ///
    /// ```swift
    /// x.variance(alongAxes: 0, 1)
    /// ```
    public func variance(alongAxes axes: Int..., keepRank: Bool = false) -> MLTensor {
        variance(alongAxes: axes, keepRank: keepRank)
    }

    /// Returns the population variance along the given axes (array form).
    ///
    /// **Tessera extension.** Two fused passes (the mean, then the squared deviations).
    ///
    /// ```swift
    /// x.variance(alongAxes: [-1], keepRank: true)
    /// ```
    ///
    /// - Precondition: Axes in `-rank..<rank`, none repeated; a floating-point scalar type.
    public func variance(alongAxes axes: [Int], keepRank: Bool = false) -> MLTensor {
        let centered = self - mean(alongAxes: axes, keepRank: true)
        return (centered * centered).mean(alongAxes: axes, keepRank: keepRank)
    }

    /// Returns the population standard deviation of all elements.
    ///
    /// **Tessera extension** (a compatibility shim).
    ///
    /// ```swift
    /// MLTensor([1, 2, 3, 4] as [Float]).standardDeviation()   // 1.118
    /// ```
    public func standardDeviation(keepRank: Bool = false) -> MLTensor {
        variance(keepRank: keepRank).squareRoot()
    }

    /// Returns the population standard deviation along the given axes.
    ///
    /// **Tessera extension.**
    ///
    /// ```swift
    /// x.standardDeviation(alongAxes: 0)
    /// ```
    public func standardDeviation(alongAxes axes: Int..., keepRank: Bool = false) -> MLTensor {
        variance(alongAxes: axes, keepRank: keepRank).squareRoot()
    }

    /// Returns the population standard deviation along the given axes (array form).
    ///
    /// **Tessera extension.**
    ///
    /// ```swift
    /// x.standardDeviation(alongAxes: [1, 2], keepRank: true)
    /// ```
    public func standardDeviation(alongAxes axes: [Int], keepRank: Bool = false) -> MLTensor {
        variance(alongAxes: axes, keepRank: keepRank).squareRoot()
    }

    /// Returns `log(sum(exp(x)))` along the given axes, computed stably with the maximum
    /// subtracted (rows of `-inf` give `-inf`, as PyTorch's `logsumexp`).
    ///
    /// **Tessera extension.**
    ///
    /// ```swift
    /// MLTensor([1, 2, 3] as [Float]).logSumExp(alongAxes: [0])   // 3.408
    /// ```
    ///
    /// - Precondition: Axes in `-rank..<rank`, none repeated; a floating-point scalar type.
    public func logSumExp(alongAxes axes: [Int], keepRank: Bool = false) -> MLTensor {
        let maximum = max(alongAxes: axes, keepRank: true)
        let shift = maximum.replacing(with: Float(0), where: .!(maximum.abs() .< Float.infinity))
        let result = ((self - shift).exp().sum(alongAxes: axes, keepRank: true)).log() + shift
        if keepRank { return result }
        guard let dropped = normalizedAxes(axes, op: "logSumExp") else { return placeholder }
        return result.reshaped(to: shape.indices.filter { !dropped.contains($0) }.map { shape[$0] })
    }

    /// Returns `log(sum(exp(x)))` over every element.
    ///
    /// **Tessera extension.**
    ///
    /// ```swift
    /// logits.logSumExp()
    /// ```
    public func logSumExp(keepRank: Bool = false) -> MLTensor {
        logSumExp(alongAxes: Array(0..<rank), keepRank: keepRank)
    }

    /// Returns the layer normalisation `(x - mean) / sqrt(variance + epsilon)` over the given
    /// axes (no scale or bias: multiply and add your own, which fuse into the same pass).
    ///
    /// **Tessera extension.** Matches `torch.nn.functional.layer_norm` without weights.
    ///
    /// ```swift
    /// let y = x.layerNorm(alongAxes: [-1]) * gamma + beta
    /// ```
    ///
    /// - Precondition: Axes in `-rank..<rank`, none repeated; a floating-point scalar type.
    public func layerNorm(alongAxes axes: [Int] = [-1], epsilon: Float = 1e-5) -> MLTensor {
        let centered = self - mean(alongAxes: axes, keepRank: true)
        let variance = (centered * centered).mean(alongAxes: axes, keepRank: true)
        return centered * (variance + epsilon).rsqrt()
    }

    /// Returns the root-mean-square normalisation `x / sqrt(mean(x²) + epsilon)` over the
    /// given axes (LLaMA's RMSNorm without its weight).
    ///
    /// **Tessera extension.** Matches `torch.nn.functional.rms_norm` without weights.
    ///
    /// ```swift
    /// let y = x.rmsNorm() * weight
    /// ```
    ///
    /// - Precondition: Axes in `-rank..<rank`, none repeated; a floating-point scalar type.
    public func rmsNorm(alongAxes axes: [Int] = [-1], epsilon: Float = 1e-6) -> MLTensor {
        self * ((self * self).mean(alongAxes: axes, keepRank: true) + epsilon).rsqrt()
    }

    /// Returns the tensor divided by its Euclidean norm along the given axes
    /// (`x / max(‖x‖, epsilon)`, as `torch.nn.functional.normalize`).
    ///
    /// **Tessera extension.** The usual last step of a sentence-embedding model.
    ///
    /// ```swift
    /// MLTensor([3, 4] as [Float]).l2Normalized()   // [0.6, 0.8]
    /// ```
    ///
    /// - Precondition: Axes in `-rank..<rank`, none repeated; a floating-point scalar type.
    public func l2Normalized(alongAxes axes: [Int] = [-1], epsilon: Float = 1e-12) -> MLTensor {
        let norm = (self * self).sum(alongAxes: axes, keepRank: true).squareRoot()
        return self / norm.binary(.max, norm.scalarOperand(epsilon))
    }

    /// Returns the cosine similarity with `other` along an axis (shapes broadcast):
    /// `sum(x / max(‖x‖, ε) * y / max(‖y‖, ε))`, as `torch.nn.functional.cosine_similarity`.
    ///
    /// **Tessera extension.**
    ///
    /// ```swift
    /// let scores = queryEmbedding.cosineSimilarity(documentEmbeddings)   // [documents]
    /// ```
    ///
    /// - Precondition: Broadcastable shapes; `axis` in range for the broadcast shape.
    public func cosineSimilarity(_ other: MLTensor, alongAxis axis: Int = -1, epsilon: Float = 1e-8) -> MLTensor {
        let a = l2Normalized(alongAxes: [axis], epsilon: epsilon)
        let b = other.l2Normalized(alongAxes: [axis], epsilon: epsilon)
        let product = a * b
        return product.sum(alongAxes: [axis])
    }
}

// MARK: - Attention

extension MLTensor {
    /// Returns `softmax(query · keyᵀ · scale + mask) · value` over the last two dimensions,
    /// batch dimensions broadcasting.
    ///
    /// **Tessera extension.** Matches `torch.nn.functional.scaled_dot_product_attention`: a
    /// `Bool` mask marks the positions that take part (false → `-inf` before the softmax); a
    /// floating-point mask is added to the scores. A row with every position masked gives NaN,
    /// as in PyTorch.
    ///
    /// ```swift
    /// // q, k, v: [batch, heads, tokens, headDim]
    /// let out = MLTensor.scaledDotProductAttention(
    ///     query: q, key: k, value: v, mask: MLTensor.causalMask(queryCount: 128))
    /// ```
    ///
    /// - Parameters:
    ///   - query: `[..., L, E]`.
    ///   - key: `[..., S, E]`.
    ///   - value: `[..., S, Ev]`.
    ///   - mask: `nil`, or a tensor broadcastable to the scores `[..., L, S]`.
    ///   - scale: The factor on the scores; `nil` means `1 / sqrt(E)`.
    /// - Precondition: Ranks ≥ 2, matching inner dimensions, and a mask that broadcasts.
    public static func scaledDotProductAttention(
        query: MLTensor, key: MLTensor, value: MLTensor, mask: MLTensor? = nil, scale: Float? = nil
    ) -> MLTensor {
        guard
            check(
                query.rank >= 2 && key.rank >= 2 && value.rank >= 2,
                "[scaledDotProductAttention] query \(query.shape), key \(key.shape), value \(value.shape) need rank ≥ 2"
            )
        else { return query.placeholder }
        let depth = query.shape[query.rank - 1]
        let factor = scale ?? 1 / Float(depth).squareRoot()
        var keyPermutation = Array(0..<key.rank)
        keyPermutation.swapAt(key.rank - 1, key.rank - 2)
        var scores = query.matmul(key.transposed(permutation: keyPermutation)) * factor
        if let mask {
            guard
                check(
                    StridedLayout.broadcastShape(mask.shape, scores.shape) == scores.shape,
                    "[scaledDotProductAttention] mask \(mask.shape) does not broadcast to the scores \(scores.shape) "
                        + "(query \(query.shape), key \(key.shape))")
            else { return query.placeholder }
        }
        let maskFits = mask.map { $0.kernelType == .float32 || $0.kernelType == .bool } ?? true
        if AttentionKernels.isVectorized && query.kernelType == .float32 && key.kernelType == .float32
            && value.kernelType == .float32 && maskFits
        {
            // One fused kernel (`GraphOp.attention`): scores, mask, softmax and the value
            // product per head, the score matrix never stored. A bool mask becomes additive.
            // Without AVX-512 the composed form keeps OpenBLAS's products.
            var inputs = [query, key, value]
            if let mask {
                inputs.append(
                    mask.kernelType == .bool
                        ? MLTensor(repeating: 0, shape: mask.shape).replacing(with: -Float.infinity, where: .!mask)
                        : mask)
            }
            return MLTensor(.attention(scale: factor), inputs)
        }
        if let mask {
            if mask.kernelType == .bool {
                scores = scores.replacing(with: -Float.infinity, where: .!mask)
            } else {
                scores = scores + mask
            }
        }
        return scores.softmax(alongAxis: -1).matmul(value)
    }

    /// Returns a `Bool` mask `[queryCount, keyCount]` that is true where key `j <= i`
    /// (the lower triangle, top-left aligned, as PyTorch's `is_causal`).
    ///
    /// **Tessera extension.**
    ///
    /// ```swift
    /// MLTensor.causalMask(queryCount: 3)   // [[T, F, F], [T, T, F], [T, T, T]]
    /// ```
    ///
    /// - Parameters:
    ///   - queryCount: Rows.
    ///   - keyCount: Columns; `nil` means `queryCount`.
    public static func causalMask(queryCount: Int, keyCount: Int? = nil) -> MLTensor {
        let columns = keyCount ?? queryCount
        guard check(queryCount >= 0 && columns >= 0, "[causalMask] negative size \(queryCount) × \(columns)") else {
            return .placeholder(type: .bool)
        }
        var scalars = [Bool](repeating: false, count: queryCount * columns)
        for i in 0..<queryCount {
            for j in 0..<Swift.min(i + 1, columns) { scalars[i * columns + j] = true }
        }
        return MLTensor(shape: [queryCount, columns], scalars: scalars, scalarType: Bool.self)
    }
}
