import COpenBLAS
import Foundation
import TesseraKernels

/// GEMM and convolution throughput: `GEMMKernels.matmul` next to a raw `cblas_sgemm` of the
/// same shape (the ratio should be ≥ 0.95), and `ConvolutionKernels.conv2d` on ResNet-50's
/// 3×3 64→64 layer, a 1×1 layer and a depthwise layer.
func runLinearAlgebraBenchmarks() {
    print("== linear algebra (\(KernelThreads.coreBudget) threads) ==")
    benchmarkGEMM(m: 256, k: 512, n: 1024)
    benchmarkGEMM(m: 1024, k: 1024, n: 1024)
    benchmarkGEMMTransposedB(m: 256, k: 512, n: 1024)

    benchmarkConv(
        "conv2d 3×3 64→64 [1,64,56,56] pad 1", input: [1, 64, 56, 56], weight: [64, 64, 3, 3],
        parameters: Conv2DParameters(padding: (1, 1, 1, 1)))
    benchmarkConv(
        "conv2d 1×1 256→64 [1,256,56,56]", input: [1, 256, 56, 56], weight: [64, 256, 1, 1],
        parameters: Conv2DParameters())
    benchmarkConv(
        "conv2d dw 3×3 [1,144,56,56] pad 1", input: [1, 144, 56, 56], weight: [144, 1, 3, 3],
        parameters: Conv2DParameters(padding: (1, 1, 1, 1), groups: 144))
    benchmarkConv(
        "conv2d 7×7/2 3→64 [1,3,224,224] pad 3", input: [1, 3, 224, 224], weight: [64, 3, 7, 7],
        parameters: Conv2DParameters(strides: (2, 2), padding: (3, 3, 3, 3)))
}

private func randomFloats(_ count: Int) -> [Float] {
    var state: UInt32 = 12345
    return (0..<count).map { _ in
        state = state &* 1_664_525 &+ 1_013_904_223
        return Float(state >> 8) / Float(1 << 24) - 0.5
    }
}

/// Times `first` and `second` alternately (ABBA order), `iterations` samples each, after 3 warm-ups each.
private func measureInterleaved(iterations: Int, _ first: () -> Void, _ second: () -> Void) -> (Timing, Timing) {
    for _ in 0..<3 {
        first()
        second()
    }
    var firstSamples: [Double] = []
    var secondSamples: [Double] = []
    func seconds(_ body: () -> Void) -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        body()
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    }
    // A B B A …: neither side always runs right after the other.
    for iteration in 0..<iterations {
        if iteration % 2 == 0 {
            firstSamples.append(seconds(first))
            secondSamples.append(seconds(second))
        } else {
            secondSamples.append(seconds(second))
            firstSamples.append(seconds(first))
        }
    }
    return (Timing(samples: firstSamples.sorted()), Timing(samples: secondSamples.sorted()))
}

private func gflops(_ flops: Double, _ timing: Timing) -> Double { flops / timing.median / 1e9 }

private func benchmarkGEMM(m: Int, k: Int, n: Int) {
    let a = randomFloats(m * k)
    let b = randomFloats(k * n)
    var c = [Float](repeating: 0, count: m * n)
    let flops = 2.0 * Double(m * n * k)
    let iterations = m * n * k > 500_000_000 ? 15 : 40
    let aLayout = StridedLayout(contiguous: [m, k])
    let bLayout = StridedLayout(contiguous: [k, n])
    let rawCall = {
        OpenBLASLibrary.shared.sgemm(
            transposeA: false, transposeB: false, m: m, n: n, k: k, alpha: 1, a: a, lda: k, b: b, ldb: n, beta: 0,
            c: &c, ldc: n)
    }
    let ourCall = {
        a.withUnsafeBytes { aRaw in
            b.withUnsafeBytes { bRaw in
                c.withUnsafeMutableBytes { cRaw in
                    GEMMKernels.matmul(
                        a: aRaw.baseAddress!, aLayout: aLayout, b: bRaw.baseAddress!, bLayout: bLayout,
                        type: .float32, output: cRaw.baseAddress!)
                }
            }
        }
    }
    // Interleaved (raw, ours, raw, ours, …) so load from other processes hits both alike.
    let (raw, ours) = measureInterleaved(iterations: iterations, rawCall, ourCall)
    blackHole(c)
    report(
        "raw cblas_sgemm, 1 thread [\(m),\(k)]×[\(k),\(n)]", raw, String(format: "%6.1f GFLOP/s", gflops(flops, raw)))
    report(
        "matmul [\(m),\(k)]×[\(k),\(n)]", ours,
        String(
            format: "%6.1f GFLOP/s  ratio %.3f (median), %.3f (best)", gflops(flops, ours),
            raw.median / ours.median, raw.best / ours.best))
}

/// `B` stored as `[N, K]` and read through a permuted layout: the transpose flag, no copy.
private func benchmarkGEMMTransposedB(m: Int, k: Int, n: Int) {
    let a = randomFloats(m * k)
    let bT = randomFloats(n * k)
    var c = [Float](repeating: 0, count: m * n)
    let aLayout = StridedLayout(contiguous: [m, k])
    let bLayout = StridedLayout(contiguous: [n, k]).permuted([1, 0])
    let timing = measure {
        a.withUnsafeBytes { aRaw in
            bT.withUnsafeBytes { bRaw in
                c.withUnsafeMutableBytes { cRaw in
                    GEMMKernels.matmul(
                        a: aRaw.baseAddress!, aLayout: aLayout, b: bRaw.baseAddress!, bLayout: bLayout,
                        type: .float32, output: cRaw.baseAddress!)
                }
            }
        }
    }
    blackHole(c)
    report(
        "matmul [\(m),\(k)]×[\(n),\(k)]ᵀ", timing,
        String(format: "%6.1f GFLOP/s", gflops(2.0 * Double(m * n * k), timing)))
}

private func benchmarkConv(_ name: String, input: [Int], weight: [Int], parameters: Conv2DParameters) {
    let x = randomFloats(input.reduce(1, *))
    let w = randomFloats(weight.reduce(1, *))
    let bias = randomFloats(weight[0])
    let shape = parameters.outputShape(inputShape: input, weightShape: weight)
    var out = [Float](repeating: 0, count: shape.reduce(1, *))
    // Multiply-adds: each output element sums C/groups · kH · kW products.
    let flops = 2.0 * Double(shape.reduce(1, *) * weight[1] * weight[2] * weight[3])
    let timing = measure(iterations: 20) {
        ConvolutionKernels.conv2d(
            input: x, inputShape: input, weights: w, weightShape: weight, bias: bias, output: &out,
            parameters: parameters)
    }
    blackHole(out)
    report(name, timing, String(format: "%6.1f GFLOP/s", gflops(flops, timing)))
}
