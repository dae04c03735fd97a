import TesseraGraph
import TesseraKernels

// Tessera extensions for text generation: the sampling steps swift-transformers and
// WhisperKit write by hand on MLTensor.

extension MLTensor {
    /// Draws category indices from the weights along the last axis (with replacement).
    ///
    /// **Tessera extension.** The weights are probabilities or any non-negative values (each
    /// row is normalised by its sum, as `torch.multinomial`); the result is `Int32` with the
    /// last dimension replaced by `sampleCount`. Draws come from the Philox generator: a seed
    /// gives the same samples on every run and machine; without one, a random seed is drawn.
    /// The seed is an input of the graph, not part of its structure, so a sampling loop
    /// reuses one cached plan whatever the seeds.
    ///
    /// ```swift
    /// let probabilities = (logits / 0.7).softmax()
    /// let token = probabilities.multinomial(seed: 42)   // [batch, 1]
    /// ```
    ///
    /// - Precondition: A floating-point tensor with a non-empty last axis; every weight finite
    ///   and non-negative, every row with a positive, finite sum (checked when computed).
    public func multinomial(sampleCount: Int = 1, seed: UInt64? = nil) -> MLTensor {
        multinomial(sampleCount: sampleCount, seed: seed, lenient: false)
    }

    /// Draws category indices from the weights along the last axis, as
    /// ``multinomial(sampleCount:seed:)``, optionally tolerating weights that come from
    /// outside.
    ///
    /// With `lenient`, a weight that is negative or not finite (NaN, ±∞) counts as 0 and a
    /// row with no positive weight left draws category 0 for every sample, instead of
    /// trapping: the model ops `random_categorical` and `categoricalDistribution` draw through
    /// it, since their weights are a prediction's feature values. Same generator, cost
    /// (O(categories + samples · log categories) per row) and result (`Int32`, the last
    /// dimension replaced by `sampleCount`) as the strict form.
    ///
    /// ```swift
    /// let weights = MLTensor(shape: [2, 3], scalars: [0.2, .nan, 0.8, 0, 0, 0], scalarType: Float.self)
    /// let drawn = weights.multinomial(sampleCount: 4, seed: 1, lenient: true)  // [2, 4]; row 1 all 0
    /// ```
    ///
    /// - Precondition: A floating-point tensor with a non-empty last axis and
    ///   `sampleCount >= 0`; unless `lenient`, every weight finite and non-negative and every
    ///   row with a positive, finite sum (checked when computed).
    package func multinomial(sampleCount: Int, seed: UInt64?, lenient: Bool) -> MLTensor {
        guard MLTensor.check(sampleCount >= 0, "[multinomial] sampleCount \(sampleCount) < 0 (shape \(shape))") else {
            return .placeholder(shape: shape, type: .int32)
        }
        let key = seed ?? UInt64.random(in: .min ... .max)
        let words = MLTensor(
            shape: [2], scalars: [UInt32(truncatingIfNeeded: key), UInt32(truncatingIfNeeded: key >> 32)],
            scalarType: UInt32.self)
        return MLTensor(.multinomial(samples: sampleCount, lenient: lenient), [self, words])
    }

    /// Returns logits with everything outside the top-p (nucleus) set replaced by
    /// `filterValue`, along the last axis.
    ///
    /// **Tessera extension.** Tokens are taken in descending order of probability (ties:
    /// lower index first) while the probability mass before them is below `p`; the most
    /// likely token is always kept. Same rule as Hugging Face's `TopPLogitsWarper`.
    ///
    /// ```swift
    /// let next = logits.topPFiltered(0.9).softmax().multinomial(seed: 1)
    /// ```
    ///
    /// - Precondition: Rank ≥ 1 and a floating-point scalar type.
    public func topPFiltered(_ p: Float, filterValue: Float = -Float.infinity) -> MLTensor {
        guard MLTensor.check(rank >= 1, "[topPFiltered] needs rank ≥ 1, got shape \(shape)") else { return placeholder }
        let axis = rank - 1
        let order = argsort(alongAxis: axis, descendingOrder: true)
        let sorted = MLTensor(.gatherElements(axis: axis), [self, order])
        let probabilities = sorted.softmax(alongAxis: axis)
        let before = MLTensor(.scan(product: false, axis: axis, exclusive: true, reverse: false), [probabilities])
        let filtered = sorted.replacing(with: filterValue, where: .!(before .< p))
        return replacing(with: filtered, atIndices: order, alongAxis: axis)
    }

    /// Returns logits with previously generated tokens penalised: positive logits divided by
    /// `penalty`, negative ones multiplied (CTRL's rule, Hugging Face's
    /// `RepetitionPenaltyLogitsProcessor`).
    ///
    /// **Tessera extension.**
    ///
    /// ```swift
    /// // logits [1, vocab], generated [1, n] Int32
    /// let penalised = logits.repetitionPenalized(1.2, tokens: generated)
    /// ```
    ///
    /// - Parameters:
    ///   - penalty: Above 1 discourages repetition.
    ///   - tokens: `Int32` token ids with the logits' rank and leading dimensions; repeats are fine.
    /// - Precondition: `tokens` is `Int32`, its shape fits the logits off the last axis, and
    ///   every id is in range (checked when computed).
    public func repetitionPenalized(_ penalty: Float, tokens: MLTensor) -> MLTensor {
        guard
            MLTensor.check(
                rank >= 1 && tokens.rank == rank,
                "[repetitionPenalized] tokens \(tokens.shape) need the rank of the logits \(shape)")
        else { return placeholder }
        let axis = rank - 1
        let picked = MLTensor(.gatherElements(axis: axis), [self, tokens])
        let penalised = (picked / penalty).replacing(with: picked * penalty, where: picked .< Float(0))
        return replacing(with: penalised, atIndices: tokens, alongAxis: axis)
    }

    /// Returns the indices of the boxes kept by greedy non-maximum suppression, best first,
    /// padded with -1 to `maxOutputCount`.
    ///
    /// **Tessera extension.** Boxes are `(x1, y1, x2, y2)` corners; a box is dropped when its
    /// intersection-over-union with a kept, higher-scoring box is greater than
    /// `iouThreshold` (the rule of `torchvision.ops.nms`; equal scores: lower index first).
    /// Boxes scoring below `scoreThreshold` are never kept. Count the kept boxes with
    /// `(result .>= 0)`.
    ///
    /// ```swift
    /// let keep = MLTensor.nonMaximumSuppression(
    ///     boxes: boxes, scores: scores, iouThreshold: 0.45, maxOutputCount: 100)
    /// ```
    ///
    /// - Parameters:
    ///   - boxes: `Float` `[n, 4]`.
    ///   - scores: `Float` `[n]`.
    ///   - iouThreshold: Overlap above which the lower-scoring box goes.
    ///   - maxOutputCount: The length of the result.
    ///   - scoreThreshold: Boxes below it are ignored.
    /// - Precondition: The shapes and types above; `maxOutputCount >= 0`.
    public static func nonMaximumSuppression(
        boxes: MLTensor, scores: MLTensor, iouThreshold: Float, maxOutputCount: Int,
        scoreThreshold: Float = -Float.infinity
    ) -> MLTensor {
        MLTensor(
            .nonMaximumSuppression(
                iouThreshold: iouThreshold, scoreThreshold: scoreThreshold, maxOutputCount: maxOutputCount),
            [boxes, scores])
    }
}
