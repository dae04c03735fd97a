import Foundation
import TesseraKernels

/// The fused attention kernel on the heads of the model workloads, `q`, `k` and `v` read in place
/// from one packed `qkv` projection `[L, 3 · heads · E]` as a model's are: the `attention` area.
/// Threads follow `TESSERA_NUM_THREADS`; `TESSERA_NO_AVX512=1` runs the AVX2 + FMA body.
func runAttentionBenchmarks() {
    print("\n== attention (fused kernel, q/k/v slices of one qkv projection, no mask) ==")
    for (name, heads, length) in [("M3/M6 layer", 12, 128), ("M7 layer", 6, 1500)] {
        benchmarkAttention(name: name, heads: heads, length: length, depth: 64)
    }
}

/// Times one layer's attention: `heads` heads of `length` queries and keys of depth `depth`.
private func benchmarkAttention(name: String, heads: Int, length: Int, depth: Int) {
    let width = 3 * heads * depth
    var state: UInt32 = 2024
    let qkv = (0..<(length * width)).map { _ -> Float in
        state = state &* 1_664_525 &+ 1_013_904_223
        return Float(state >> 8) / Float(1 << 24) * 4 - 2
    }
    var out = [Float](repeating: 0, count: heads * length * depth)
    // [heads, L, E] views: head h starts h · E into a row; rows are `width` apart.
    func slice(_ part: Int) -> StridedLayout {
        StridedLayout(shape: [heads, length, depth], strides: [depth, width, 1], offset: part * heads * depth)
    }
    let flops = 4.0 * Double(heads * length * length * depth)
    let timing = qkv.withUnsafeBytes { raw in
        measure(iterations: length > 512 ? 10 : 100) {
            out.withUnsafeMutableBufferPointer { output in
                AttentionKernels.attention(
                    query: raw.baseAddress!, queryLayout: slice(0), key: raw.baseAddress!, keyLayout: slice(1),
                    value: raw.baseAddress!, valueLayout: slice(2), mask: nil, maskLayout: nil,
                    scale: 1 / Float(depth).squareRoot(), output: output.baseAddress!)
            }
        }
    }
    blackHole(out)
    report(
        "\(name): \(heads) heads, L = S = \(length), E = \(depth)", timing,
        String(format: "%6.1f GFLOP/s", flops / timing.median / 1e9))
}
