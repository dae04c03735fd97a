import Foundation
import TesseraKernels

/// ResNet-50's 3×3 stride-1 convolutions (pad 1, bias, ReLU) with their weights prepared once
/// as a model's are: the `winograd` area. Run it with `TESSERA_WINOGRAD=0` (im2col on packed
/// panels), `2` or `4` (every layer with that Winograd tile) and unset (the chosen path) to
/// compare the paths per shape.
func runWinogradBenchmarks() {
    let path = WinogradBenchmarkPath.current
    print("\n== winograd (ResNet-50 3×3 stride 1, pad 1, bias + ReLU; path: \(path)) ==")
    for (channels, size) in [(64, 56), (128, 28), (256, 14), (512, 7)] {
        benchmarkConv3x3(channels: channels, size: size)
    }
}

private enum WinogradBenchmarkPath {
    static var current: String {
        switch ProcessInfo.processInfo.environment["TESSERA_WINOGRAD"] {
        case "0": return "im2col"
        case "2": return "Winograd F(2,3)"
        case "4": return "Winograd F(4,3)"
        default: return "chosen"
        }
    }
}

/// Times one layer, the weight prepared beforehand in the form its path consumes.
private func benchmarkConv3x3(channels: Int, size: Int) {
    let input = [1, channels, size, size]
    let weight = [channels, channels, 3, 3]
    let parameters = Conv2DParameters(padding: (1, 1, 1, 1))
    var state: UInt32 = 12345
    let random: (Int) -> [Float] = { count in
        (0..<count).map { _ in
            state = state &* 1_664_525 &+ 1_013_904_223
            return Float(state >> 8) / Float(1 << 24) - 0.5
        }
    }
    let x = random(input.reduce(1, *))
    let w = random(weight.reduce(1, *))
    let bias = random(channels)
    var out = [Float](repeating: 0, count: input.reduce(1, *))
    let tile = ConvolutionKernels.route(inputShape: input, weightShape: weight, parameters: parameters).winogradTile
    let filter = tile.map {
        WinogradFilter(transforming: w, outputChannels: channels, inputChannels: channels, tile: $0)
    }
    let packed = PackedGEMMOperand(packing: w, lda: channels * 9, rows: channels, depth: channels * 9)
    let flops = 2.0 * Double(out.count * channels * 9)
    let timing = measure(iterations: 30) {
        ConvolutionKernels.conv2d(
            input: x, inputShape: input, weights: w, weightShape: weight, bias: bias, output: &out,
            parameters: parameters, clamp: .relu, packedWeights: packed, winogradFilter: filter)
    }
    blackHole(out)
    report(
        "3×3 \(channels)→\(channels) [\(size),\(size)] " + (tile.map { "F(\($0),3)" } ?? "im2col"), timing,
        String(format: "%6.1f effective GFLOP/s", flops / timing.median / 1e9))
}
