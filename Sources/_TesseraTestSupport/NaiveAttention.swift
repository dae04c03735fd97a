import Foundation

/// A deliberately naive scaled dot-product attention for the fused kernel's tests: the score
/// matrix in full, a two-pass softmax and the value product, in `Double`, over row-major arrays.
package enum NaiveAttention {
    /// `softmax(scale · q · kᵀ + mask) · v` for `heads` heads: `q [heads, l, e]`,
    /// `k [heads, s, e]`, `v [heads, s, ev]`, `mask` (optional) `[heads, l, s]`, all row-major;
    /// the result `[heads, l, ev]`. A row whose every score is `-infinity` is NaN.
    package static func attention(
        q: [Float], k: [Float], v: [Float], mask: [Float]?, heads: Int, l: Int, s: Int, e: Int, ev: Int,
        scale: Float
    ) -> [Double] {
        var out = [Double](repeating: 0, count: heads * l * ev)
        for h in 0..<heads {
            for i in 0..<l {
                var scores = [Double](repeating: 0, count: s)
                for j in 0..<s {
                    var dot = 0.0
                    for p in 0..<e { dot += Double(q[(h * l + i) * e + p]) * Double(k[(h * s + j) * e + p]) }
                    scores[j] = dot * Double(scale) + (mask.map { Double($0[(h * l + i) * s + j]) } ?? 0)
                }
                let largest = scores.max() ?? 0
                let weights = scores.map { largest == -.infinity ? Double.nan : Foundation.exp($0 - largest) }
                let total = weights.reduce(0, +)
                for c in 0..<ev {
                    var sum = 0.0
                    for j in 0..<s { sum += weights[j] * Double(v[(h * s + j) * ev + c]) }
                    out[(h * l + i) * ev + c] = s == 0 ? 0 : sum / total
                }
            }
        }
        return out
    }
}
