import Foundation
import TesseraKernels

/// Times the reduction kernels on float32 workloads from transformer inference and prints
/// bandwidth (bytes read + written per second).
func runReductionBenchmarks() {
    func gigabytesPerSecond(_ bytes: Int, _ timing: Timing) -> String {
        String(format: "%6.2f GB/s", Double(bytes) / timing.median / 1e9)
    }
    func buffer(_ count: Int, seed: Int) -> [Float] {
        (0..<count).map { Float(($0 &* 2_654_435_761 &+ seed) % 1000) / 500 - 1 }
    }

    // Sum over the last axis of [256, 768]: per-row SIMD reduction.
    do {
        let shape = [256, 768]
        let x = buffer(256 * 768, seed: 1)
        var out = [Float](repeating: 0, count: 256)
        let timing = x.withUnsafeBytes { input in
            out.withUnsafeMutableBytes { output in
                measure {
                    ReductionKernels.reduce(
                        .sum, input: input.baseAddress!, layout: StridedLayout(contiguous: shape), type: .float32,
                        axes: [1], output: output.baseAddress!, outputType: .float32)
                }
            }
        }
        blackHole(out)
        report("reduce sum [256,768] axis -1", timing, gigabytesPerSecond((x.count + out.count) * 4, timing))
    }

    // Mean over the middle axis of [64, 64, 64]: column sums, no transpose.
    do {
        let shape = [64, 64, 64]
        let x = buffer(64 * 64 * 64, seed: 2)
        var out = [Float](repeating: 0, count: 64 * 64)
        let timing = x.withUnsafeBytes { input in
            out.withUnsafeMutableBytes { output in
                measure {
                    ReductionKernels.reduce(
                        .mean, input: input.baseAddress!, layout: StridedLayout(contiguous: shape), type: .float32,
                        axes: [1], output: output.baseAddress!, outputType: .float32)
                }
            }
        }
        blackHole(out)
        report("reduce mean [64,64,64] axis 1", timing, gigabytesPerSecond((x.count + out.count) * 4, timing))
    }

    // Softmax along the last axis of [64, 1000] (logits), then argmax along it.
    do {
        let shape = [64, 1000]
        let x = buffer(64 * 1000, seed: 3)
        var probabilities = [Float](repeating: 0, count: x.count)
        var indices = [Int32](repeating: 0, count: 64)
        let softmax = x.withUnsafeBytes { input in
            probabilities.withUnsafeMutableBytes { output in
                measure {
                    SoftmaxKernels.softmax(
                        input: input.baseAddress!, layout: StridedLayout(contiguous: shape), type: .float32, axis: -1,
                        output: output.baseAddress!)
                }
            }
        }
        blackHole(probabilities)
        report("softmax [64,1000] axis -1", softmax, gigabytesPerSecond(x.count * 8, softmax))
        let argmax = x.withUnsafeBytes { input in
            indices.withUnsafeMutableBytes { output in
                measure {
                    ReductionKernels.reduce(
                        .argmax, input: input.baseAddress!, layout: StridedLayout(contiguous: shape), type: .float32,
                        axes: [1], output: output.baseAddress!, outputType: .int32)
                }
            }
        }
        blackHole(indices)
        report("argmax [64,1000] axis -1", argmax, gigabytesPerSecond(x.count * 4 + indices.count * 4, argmax))
    }
}
