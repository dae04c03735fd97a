/// The layout both packed GEMM operands use, computed index by index: line `i` of a
/// `count × depth` matrix (its element `k` at `source[i · stride + k]`) goes to panel
/// `i / width`, element `k` at offset `k · width + i % width` of that panel; the lines of the
/// last panel beyond `count` are zeros. `PackedGEMMOperand` packs rows in panels of 8,
/// `PackedGEMMRightOperand` columns of `B` (rows of `Bᵀ`) in strips of 16.
///
/// ```swift
/// #expect(packedPanels == referencePanels(a, count: m, depth: k, stride: lda, width: 8))
/// ```
func referencePanels(_ source: [Float], count: Int, depth: Int, stride: Int, width: Int) -> [Float] {
    let lines = (count + width - 1) / width * width
    var panels = [Float](repeating: 0, count: lines * depth)
    for i in 0..<count {
        for k in 0..<depth { panels[(i / width) * width * depth + k * width + i % width] = source[i * stride + k] }
    }
    return panels
}
