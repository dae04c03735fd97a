import TesseraTensor

/// `NonMaximumSuppression`: greedy suppression of a batch of boxes, on the detection kernel
/// (``MLTensor/nonMaximumSuppression(boxes:scores:iouThreshold:maxOutputCount:scoreThreshold:)``).
///
/// Inputs: boxes `[B, N, 4]` as `(x center, y center, width, height)`, scores `[B, N, C]`,
/// then optionally the IoU threshold, the score threshold and the maximum box count (each
/// `[1]`, overriding the parameter; read when the prediction is built). A box's score is its
/// best class score; boxes below the score threshold are dropped; a box whose IoU with a kept,
/// better box is above the IoU threshold is suppressed; with `perClassSuppression` only boxes
/// of the same best class suppress each other (their corners are shifted apart per class, so
/// boxes of two classes never overlap). Outputs, best first and padded to `maxBoxes`: the kept
/// boxes `[B, M, 4]` and their scores `[B, M, C]` (padding 0), their indices `[B, M]`
/// (padding −1) and their count `[B]`. When no box survives, the best-scoring box is given
/// with a count of 1, as the specification says.
extension NeuralNetworkLayerType {
    static let detectionLayers: [NeuralNetworkLayerType] = [
        NeuralNetworkLayerType(field: 1400, cost: .reduction, valueReads: [2, 3, 4]) { layer in
            // NonMaximumSuppressionLayerParams: iouThreshold = 1, scoreThreshold = 2,
            // maxBoxes = 3, perClassSuppression = 4.
            try layer.requireCounts(inputs: 2...5, outputs: 4)
            let p = layer.params
            let (iou, score) = (p.float(1) ?? 0, p.float(2) ?? 0)
            let maxBoxes = p.size(3) ?? 0
            let perClass = p.bool(4)
            let count = layer.inputCount
            return { args in
                func scalar(_ index: Int, _ fallback: Float) -> Float {
                    count > index ? args[index].asFloat.scalars(of: Float.self).first ?? fallback : fallback
                }
                let m = try LoweredFunction.computedCount(Double(scalar(4, Float(maxBoxes))), "maxBoxes")
                try require(m >= 1 && m <= 1 << 20, "maxBoxes \(m) must be positive")
                return try suppress(
                    boxes: args[0].asFloat, scores: args[1].asFloat, iouThreshold: scalar(2, iou),
                    scoreThreshold: scalar(3, score), maxBoxes: m, perClass: perClass)
            }
        }
    ]

    /// The four outputs of the NMS layer for boxes `[B, N, 4]` and scores `[B, N, C]`.
    static func suppress(
        boxes: MLTensor, scores: MLTensor, iouThreshold: Float, scoreThreshold: Float, maxBoxes m: Int, perClass: Bool
    ) throws -> [MLTensor] {
        try require(
            boxes.rank == 3 && boxes.shape[2] == 4 && scores.rank == 3 && scores.shape[0] == boxes.shape[0]
                && scores.shape[1] == boxes.shape[1] && scores.shape[2] >= 1 && boxes.shape[1] >= 1,
            "boxes \(boxes.shape) and scores \(scores.shape) must be [B, N, 4] and [B, N, C]")
        let (batch, n, classes) = (scores.shape[0], scores.shape[1], scores.shape[2])
        let first = MLTensor(shape: [m], scalars: (0..<m).map { $0 == 0 ? 1 : 0 }, scalarType: Float.self)
        var outputs: [[MLTensor]] = [[], [], [], []]
        for b in 0..<batch {
            let box = boxes.narrowed(alongAxis: 0, start: b, count: 1).reshaped(to: [n, 4])
            let classScores = scores.narrowed(alongAxis: 0, start: b, count: 1).reshaped(to: [n, classes])
            let best = classScores.max(alongAxes: [1], keepRank: false)
            let center = box.narrowed(alongAxis: 1, start: 0, count: 2)
            let half = box.narrowed(alongAxis: 1, start: 2, count: 2) * Float(0.5)
            var corners = MLTensor(concatenating: [center - half, center + half], alongAxis: 1)
            if perClass && classes > 1 {
                let label = classScores.argmax(alongAxis: 1).cast(to: Float.self).reshaped(to: [n, 1])
                let span = corners.max() - corners.min() + Float(1)
                corners = corners + label * span
            }
            let kept = MLTensor.nonMaximumSuppression(
                boxes: corners, scores: best, iouThreshold: iouThreshold, maxOutputCount: m,
                scoreThreshold: scoreThreshold
            ).cast(to: Float.self)
            let valid = (kept .>= Float(0)).asFloat
            let survivors = valid.sum()
            // No survivor: the best box, counted once.
            let none = (survivors .== Float(0)).asFloat * first
            let top = best.argmax(alongAxis: 0).cast(to: Float.self)
            let indices = kept * (1 - none) + top * none
            let mask = valid + none
            let chosen = pointwiseMax(indices, indices.scalar(0)).asInt32
            outputs[0].append(box.gathering(atIndices: chosen, alongAxis: 0) * mask.reshaped(to: [m, 1]))
            outputs[1].append(classScores.gathering(atIndices: chosen, alongAxis: 0) * mask.reshaped(to: [m, 1]))
            outputs[2].append(indices)
            outputs[3].append(mask.sum().reshaped(to: [1]))
        }
        return outputs.enumerated().map { index, parts in
            let stacked = MLTensor(concatenating: parts.map { index < 3 ? $0.expandingShape(at: 0) : $0 }, alongAxis: 0)
            return stacked
        }
    }
}
