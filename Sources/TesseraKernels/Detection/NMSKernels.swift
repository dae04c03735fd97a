/// Greedy non-maximum suppression over axis-aligned boxes.
package enum NMSKernels {
    /// Writes the indices of the boxes kept by greedy NMS, highest score first, padded with -1.
    ///
    /// Boxes are `(x1, y1, x2, y2)` corners, `count × 4` contiguous float32; boxes are visited
    /// in descending score order (ties: lower index first) and a box is dropped when its
    /// intersection-over-union with an already kept box is **greater** than `iouThreshold` —
    /// the rule of `torchvision.ops.nms`. Boxes scoring below `scoreThreshold` are never kept.
    ///
    /// ```swift
    /// NMSKernels.nonMaximumSuppression(boxes: b, scores: s, count: 100, iouThreshold: 0.5,
    ///                                  scoreThreshold: -.infinity, maxOutputCount: 10, output: out)
    /// ```
    ///
    /// - Returns: The number of boxes kept (at most `maxOutputCount`); the rest of `output` is -1.
    @discardableResult
    package static func nonMaximumSuppression(
        boxes: UnsafePointer<Float>, scores: UnsafePointer<Float>, count: Int, iouThreshold: Float,
        scoreThreshold: Float, maxOutputCount: Int, output: UnsafeMutablePointer<Int32>
    ) -> Int {
        output.initialize(repeating: -1, count: maxOutputCount)
        if count == 0 || maxOutputCount == 0 { return 0 }
        var candidates = (0..<count).filter { scores[$0] >= scoreThreshold }.map { Int32($0) }
        candidates.sort { a, b in SortKernels.ranksBefore(scores[Int(a)], a, scores[Int(b)], b, descending: true) }
        let areas = (0..<count).map { i -> Float in
            (boxes[4 * i + 2] - boxes[4 * i]) * (boxes[4 * i + 3] - boxes[4 * i + 1])
        }
        var kept = 0
        for candidate in candidates {
            let i = Int(candidate)
            let (x1, y1, x2, y2) = (boxes[4 * i], boxes[4 * i + 1], boxes[4 * i + 2], boxes[4 * i + 3])
            var suppressed = false
            for k in 0..<kept {
                let j = Int(output[k])
                let w = Swift.max(0, Swift.min(x2, boxes[4 * j + 2]) - Swift.max(x1, boxes[4 * j]))
                let h = Swift.max(0, Swift.min(y2, boxes[4 * j + 3]) - Swift.max(y1, boxes[4 * j + 1]))
                let intersection = w * h
                let iou = intersection / (areas[i] + areas[j] - intersection)
                if iou > iouThreshold {
                    suppressed = true
                    break
                }
            }
            if suppressed { continue }
            output[kept] = candidate
            kept += 1
            if kept == maxOutputCount { break }
        }
        return kept
    }
}
