import Foundation
import TesseraKernels

/// MobileNetV2's depthwise 3×3 convolutions (pad 1, stride 1 or 2), one line per distinct
/// shape, and their sum over the network's 17 layers; then a few of its pointwise layers with
/// ReLU6 as the epilogue: what the `conv` area times.
func runConvolutionBenchmarks() {
    print("\n== conv (MobileNetV2 depthwise 3×3, pad 1, with bias) ==")
    // (channels, input size, stride, how many layers of MobileNetV2 have this shape)
    let layers: [(channels: Int, size: Int, stride: Int, repeats: Int)] = [
        (32, 112, 1, 1), (96, 112, 2, 1), (144, 56, 1, 1), (144, 56, 2, 1), (192, 28, 1, 2), (192, 28, 2, 1),
        (384, 14, 1, 4), (576, 14, 1, 2), (576, 14, 2, 1), (960, 7, 1, 3),
    ]
    var totalSeconds = 0.0
    var totalFlops = 0.0
    for layer in layers {
        let (seconds, flops) = benchmarkDepthwise(
            channels: layer.channels, size: layer.size, stride: layer.stride)
        totalSeconds += seconds * Double(layer.repeats)
        totalFlops += flops * Double(layer.repeats)
    }
    print(
        "\("all 17 depthwise layers (sum of medians)".padding(toLength: 44, withPad: " ", startingAt: 0)) "
            + String(format: "%9.3f ms         %6.1f GFLOP/s", totalSeconds * 1e3, totalFlops / totalSeconds / 1e9))
    print("\n== conv (MobileNetV2 pointwise 1×1, with bias and ReLU6) ==")
    for (input, outputs) in [
        ([1, 16, 112, 112], 96), ([1, 144, 56, 56], 24), ([1, 64, 14, 14], 384), ([1, 320, 7, 7], 1280),
        ([1, 192, 28, 28], 32), ([1, 32, 28, 28], 192), ([1, 960, 7, 7], 160), ([1, 384, 14, 14], 64),
    ] {
        benchmarkPointwise(input: input, outputs: outputs)
    }
}

/// Times one pointwise layer with ReLU6 as its epilogue.
private func benchmarkPointwise(input: [Int], outputs: Int) {
    let weight = [outputs, input[1], 1, 1]
    let x = randomFloats(input.reduce(1, *))
    let w = randomFloats(weight.reduce(1, *))
    let bias = randomFloats(outputs)
    var out = [Float](repeating: 0, count: outputs * input[2] * input[3])
    let flops = 2.0 * Double(out.count * input[1])
    let timing = measure(iterations: 50) {
        ConvolutionKernels.conv2d(
            input: x, inputShape: input, weights: w, weightShape: weight, bias: bias, output: &out,
            parameters: Conv2DParameters(), clamp: .relu6)
    }
    blackHole(out)
    report(
        "pw 1×1 \(input[1])→\(outputs) [\(input[2]),\(input[3])] relu6", timing,
        String(format: "%6.1f GFLOP/s", gflops(flops, timing)))
}

/// Times one depthwise layer and returns its median seconds and its FLOPs (2 per tap).
private func benchmarkDepthwise(channels: Int, size: Int, stride: Int) -> (seconds: Double, flops: Double) {
    let input = [1, channels, size, size]
    let weight = [channels, 1, 3, 3]
    let parameters = Conv2DParameters(strides: (stride, stride), padding: (1, 1, 1, 1), groups: channels)
    let x = randomFloats(input.reduce(1, *))
    let w = randomFloats(weight.reduce(1, *))
    let bias = randomFloats(channels)
    let shape = parameters.outputShape(inputShape: input, weightShape: weight)
    var out = [Float](repeating: 0, count: shape.reduce(1, *))
    let flops = 2.0 * Double(shape.reduce(1, *) * 9)
    let timing = measure(iterations: 50) {
        ConvolutionKernels.conv2d(
            input: x, inputShape: input, weights: w, weightShape: weight, bias: bias, output: &out,
            parameters: parameters)
    }
    blackHole(out)
    report(
        "dw 3×3/\(stride) [1,\(channels),\(size),\(size)]", timing,
        String(format: "%6.1f GFLOP/s", gflops(flops, timing)))
    return (timing.median, flops)
}

private func randomFloats(_ count: Int) -> [Float] {
    var state: UInt32 = 12345
    return (0..<count).map { _ in
        state = state &* 1_664_525 &+ 1_013_904_223
        return Float(state >> 8) / Float(1 << 24) - 0.5
    }
}

private func gflops(_ flops: Double, _ timing: Timing) -> Double { flops / timing.median / 1e9 }
