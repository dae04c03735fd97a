import Testing
import _TesseraTestSupport

@testable import TesseraKernels

/// The NaN-propagating `max(x, y)` of the fused programs (`BinaryOp.max`), written out.
private func nanMax(_ x: Float, _ y: Float) -> Float { y.isNaN ? y : (x.isNaN ? x : (y > x ? y : x)) }
/// The NaN-propagating `min(x, y)` (`BinaryOp.min`), written out.
private func nanMin(_ x: Float, _ y: Float) -> Float { y.isNaN ? y : (x.isNaN ? x : (y < x ? y : x)) }

/// Depthwise convolution by its definition in Float, in the kernel's summation order: `bias`
/// (0 without one), then `acc = acc + w · x` for every tap inside the image in `(i, j)` order
/// (taps in the padding are skipped), then `min(max(acc, lower), upper)`.
private func depthwiseReference(
    _ x: [Float], _ input: [Int], _ w: [Float], _ weight: [Int], bias: [Float]?, _ p: Conv2DParameters,
    clamp: ConvolutionClamp
) -> [Float] {
    let shape = p.outputShape(inputShape: input, weightShape: weight)
    let (n, c, h, wd) = (input[0], input[1], input[2], input[3])
    let (o, kh, kw) = (weight[0], weight[2], weight[3])
    let (oh, ow) = (shape[2], shape[3])
    var out = [Float](repeating: 0, count: shape.reduce(1, *))
    for image in 0..<n {
        for channel in 0..<o {
            let plane = (image * c + channel / (o / c)) * h * wd
            for y in 0..<oh {
                for xo in 0..<ow {
                    var acc = bias?[channel] ?? 0
                    for i in 0..<kh {
                        let row = y * p.strideHeight - p.padTop + i * p.dilationHeight
                        if row < 0 || row >= h { continue }
                        for j in 0..<kw {
                            let column = xo * p.strideWidth - p.padLeft + j * p.dilationWidth
                            if column < 0 || column >= wd { continue }
                            let product = w[(channel * kh + i) * kw + j] * x[plane + row * wd + column]
                            acc = acc + product
                        }
                    }
                    out[((image * o + channel) * oh + y) * ow + xo] = nanMin(nanMax(acc, clamp.lower), clamp.upper)
                }
            }
        }
    }
    return out
}

/// One depthwise configuration.
struct DepthwiseCase: Sendable, CustomStringConvertible {
    var input: [Int]
    var kernel: (Int, Int) = (3, 3)
    var multiplier = 1
    var parameters: Conv2DParameters
    var bias = true

    var description: String { "\(input) k\(kernel) ×\(multiplier) \(parameters)\(bias ? "" : " no bias")" }

    var weight: [Int] { [input[1] * multiplier, 1, kernel.0, kernel.1] }

    static func padded(_ input: [Int], stride: Int, pad: Int = 1) -> DepthwiseCase {
        DepthwiseCase(
            input: input,
            parameters: Conv2DParameters(
                strides: (stride, stride), padding: (pad, pad, pad, pad), groups: input[1]))
    }

    static let all: [DepthwiseCase] = [
        // MobileNetV2's planes (few channels), stride 1 and 2, pad 1.
        .padded([1, 2, 112, 112], stride: 1), .padded([1, 2, 112, 112], stride: 2),
        .padded([1, 3, 56, 56], stride: 1), .padded([1, 3, 56, 56], stride: 2),
        .padded([2, 3, 28, 28], stride: 1), .padded([1, 3, 28, 28], stride: 2),
        .padded([1, 4, 14, 14], stride: 1), .padded([1, 4, 14, 14], stride: 2),
        .padded([2, 5, 7, 7], stride: 1), .padded([1, 5, 7, 7], stride: 2),
        // Widths around the vector lengths (8, 16; 2·16 inputs for stride 2), 1×N and N×1.
        .padded([1, 2, 5, 15], stride: 1), .padded([1, 2, 5, 16], stride: 1), .padded([1, 2, 5, 17], stride: 1),
        .padded([1, 2, 4, 31], stride: 2), .padded([1, 2, 4, 32], stride: 2), .padded([1, 2, 4, 33], stride: 2),
        .padded([1, 2, 3, 34], stride: 2), .padded([1, 2, 3, 65], stride: 2), .padded([1, 2, 3, 66], stride: 1),
        .padded([1, 3, 1, 37], stride: 1), .padded([1, 3, 1, 37], stride: 2), .padded([1, 3, 40, 1], stride: 1),
        .padded([1, 2, 1, 1], stride: 1), .padded([1, 2, 2, 2], stride: 2),
        // No padding, padding wider than the kernel reaches, asymmetric padding.
        .padded([1, 2, 9, 40], stride: 1, pad: 0), .padded([1, 2, 9, 41], stride: 2, pad: 0),
        .padded([1, 2, 6, 19], stride: 1, pad: 3), .padded([1, 2, 6, 37], stride: 2, pad: 2),
        DepthwiseCase(
            input: [1, 3, 9, 35], parameters: Conv2DParameters(strides: (2, 2), padding: (0, 1, 0, 1), groups: 3)),
        DepthwiseCase(
            input: [1, 3, 8, 21], parameters: Conv2DParameters(strides: (1, 2), padding: (2, 0, 1, 2), groups: 3)),
        // The input-rows-outer 3×3 kernels (stride 1 or 2 both ways, dilation 1): uneven top and
        // bottom padding, padding taller than the image, a single row.
        DepthwiseCase(
            input: [1, 3, 7, 19], parameters: Conv2DParameters(padding: (2, 0, 0, 2), groups: 3)),
        DepthwiseCase(
            input: [1, 3, 2, 18], parameters: Conv2DParameters(padding: (2, 2, 1, 1), groups: 3)),
        DepthwiseCase(
            input: [1, 3, 8, 35], parameters: Conv2DParameters(strides: (2, 2), padding: (2, 1, 2, 0), groups: 3)),
        DepthwiseCase(
            input: [1, 3, 1, 40], parameters: Conv2DParameters(strides: (2, 2), padding: (2, 2, 1, 1), groups: 3)),
        // Planes in pairs (`tessera_depthwise_planes_f32`): an even count, a pair across two
        // images (planes 4 and 5 of 2 × 5), an odd count's last plane alone.
        .padded([1, 6, 14, 14], stride: 2), .padded([2, 5, 9, 33], stride: 2), .padded([2, 5, 12, 20], stride: 1),
        // Channel multiplier, no bias.
        DepthwiseCase(
            input: [2, 3, 11, 20], multiplier: 2,
            parameters: Conv2DParameters(strides: (2, 2), padding: (1, 1, 1, 1), groups: 3), bias: false),
        // Flattened small planes (at most 64 positions, kept size, stride 1): 5 × 5 (25 taps),
        // dilation 2, 8 × 8 (four full vectors), a channel multiplier without bias; 7 × 7 taps
        // (49, too many) take the row kernels.
        DepthwiseCase(
            input: [1, 2, 6, 6], kernel: (5, 5), parameters: Conv2DParameters(padding: (2, 2, 2, 2), groups: 2)),
        DepthwiseCase(
            input: [1, 3, 8, 8],
            parameters: Conv2DParameters(dilations: (2, 2), padding: (2, 2, 2, 2), groups: 3)),
        DepthwiseCase(
            input: [2, 3, 7, 7], multiplier: 2, parameters: Conv2DParameters(padding: (1, 1, 1, 1), groups: 3),
            bias: false),
        DepthwiseCase(
            input: [1, 2, 7, 7], kernel: (7, 7), parameters: Conv2DParameters(padding: (3, 3, 3, 3), groups: 2)),
        // The general fallbacks: other kernels, dilations, strides 3 and (2, 1).
        DepthwiseCase(
            input: [1, 2, 12, 30], kernel: (5, 5),
            parameters: Conv2DParameters(padding: (2, 2, 2, 2), groups: 2)),
        DepthwiseCase(
            input: [1, 2, 12, 45], kernel: (3, 3),
            parameters: Conv2DParameters(dilations: (2, 2), padding: (2, 2, 2, 2), groups: 2)),
        DepthwiseCase(
            input: [1, 2, 10, 50], kernel: (3, 5),
            parameters: Conv2DParameters(strides: (2, 2), dilations: (1, 3), padding: (1, 1, 6, 6), groups: 2)),
        DepthwiseCase(
            input: [1, 2, 10, 40], kernel: (3, 3),
            parameters: Conv2DParameters(strides: (3, 3), padding: (1, 1, 1, 1), groups: 2)),
        DepthwiseCase(
            input: [1, 2, 10, 40], kernel: (2, 4),
            parameters: Conv2DParameters(strides: (2, 1), padding: (0, 1, 2, 1), groups: 2)),
        DepthwiseCase(
            input: [1, 2, 7, 26], kernel: (1, 1), parameters: Conv2DParameters(strides: (1, 2), groups: 2)),
    ]
}

/// Runs the kernel and the reference on seeded data (with some `-0`, infinities and NaNs
/// when `special` is set) and returns both.
private func runDepthwise(_ c: DepthwiseCase, clamp: ConvolutionClamp, special: Bool = false) -> ([Float], [Float]) {
    var rng = SeededRandom(seed: UInt64(c.input.reduce(11, *) + c.weight.reduce(5, *)))
    var x = rng.floats(c.input.reduce(1, *))
    var w = rng.floats(c.weight.reduce(1, *))
    var bias = c.bias ? rng.floats(c.weight[0]) : nil
    if special {
        for k in stride(from: 0, to: x.count, by: 17) { x[k] = -0.0 }
        for k in stride(from: 5, to: x.count, by: 97) { x[k] = .infinity }
        for k in stride(from: 9, to: x.count, by: 131) { x[k] = .nan }
        w[0] = -0.0
        if bias != nil { bias![0] = -0.0 }
    }
    let shape = c.parameters.outputShape(inputShape: c.input, weightShape: c.weight)
    func run(_ b: UnsafePointer<Float>?) -> [Float] {
        var out = [Float](repeating: .nan, count: shape.reduce(1, *))
        ConvolutionKernels.conv2d(
            input: x, inputShape: c.input, weights: w, weightShape: c.weight, bias: b, output: &out,
            parameters: c.parameters, clamp: clamp)
        return out
    }
    let out = bias.map { bias in bias.withUnsafeBufferPointer { run($0.baseAddress) } } ?? run(nil)
    let expected = depthwiseReference(x, c.input, w, c.weight, bias: bias, c.parameters, clamp: clamp)
    return (out, expected)
}

/// The first index whose bits differ, with both values.
private func firstBitMismatch(_ got: [Float], _ expected: [Float]) -> String? {
    if got.count != expected.count { return "counts \(got.count) vs \(expected.count)" }
    for k in got.indices where got[k].bitPattern != expected[k].bitPattern {
        return "element \(k): \(got[k]) (\(got[k].bitPattern)) vs \(expected[k]) (\(expected[k].bitPattern))"
    }
    return nil
}

@Suite("Depthwise convolution")
struct DepthwiseConvolutionTests {
    @Test("bit-identical to the same-order Float reference", arguments: DepthwiseCase.all)
    func sameOrderReference(_ c: DepthwiseCase) {
        #expect(
            ConvolutionKernels.path(
                channels: c.input[1], kernelHeight: c.kernel.0, kernelWidth: c.kernel.1, parameters: c.parameters)
                == .depthwise)
        for clamp in [ConvolutionClamp.none, .relu6, ConvolutionClamp(lower: -0.25, upper: 0.5)] {
            let (got, expected) = runDepthwise(c, clamp: clamp)
            let mismatch = firstBitMismatch(got, expected)
            #expect(mismatch == nil, "\(c), \(clamp): \(mismatch ?? "")")
        }
    }

    @Test("-0, infinities and NaN inputs give the reference's bits", arguments: DepthwiseCase.all.prefix(12))
    func specialValues(_ c: DepthwiseCase) {
        for clamp in [ConvolutionClamp.none, .relu, .relu6] {
            let (got, expected) = runDepthwise(c, clamp: clamp, special: true)
            let mismatch = firstBitMismatch(got, expected)
            #expect(mismatch == nil, "\(c), \(clamp): \(mismatch ?? "")")
        }
    }

    @Test("a NaN bound makes every output that NaN")
    func nanBound() {
        let c = DepthwiseCase.padded([1, 2, 9, 20], stride: 1)
        for clamp in [ConvolutionClamp(lower: .nan), ConvolutionClamp(lower: 0, upper: .nan)] {
            let (got, expected) = runDepthwise(c, clamp: clamp)
            let allNaN = got.allSatisfy { $0.isNaN }
            #expect(allNaN)
            #expect(firstBitMismatch(got, expected) == nil)
        }
    }
}

@Suite("Convolution clamp on the GEMM paths")
struct ConvolutionClampTests {
    @Test("conv2d with a clamp equals conv2d then NaN-propagating max and min", arguments: ConvCase.all)
    func clampAfterGEMM(_ c: ConvCase) {
        var rng = SeededRandom(seed: UInt64(c.input.reduce(13, *) + c.weight.reduce(3, *)))
        var x = rng.floats(c.input.reduce(1, *))
        x[0] = .nan
        let w = rng.floats(c.weight.reduce(1, *))
        let bias = c.bias ? rng.floats(c.weight[0]) : nil
        let count = c.parameters.outputShape(inputShape: c.input, weightShape: c.weight).reduce(1, *)
        for clamp in [ConvolutionClamp.relu, .relu6, ConvolutionClamp(lower: -0.5, upper: 0.25)] {
            for columnBufferBytes in [ConvolutionKernels.defaultColumnBufferBytes, 3 * c.weight[1...].reduce(4, *)] {
                var plain = [Float](repeating: 0, count: count)
                var clamped = [Float](repeating: 0, count: count)
                let run = { (b: UnsafePointer<Float>?, out: UnsafeMutablePointer<Float>, clamp: ConvolutionClamp) in
                    ConvolutionKernels.conv2d(
                        input: x, inputShape: c.input, weights: w, weightShape: c.weight, bias: b, output: out,
                        parameters: c.parameters, clamp: clamp, columnBufferBytes: columnBufferBytes)
                }
                if let bias {
                    bias.withUnsafeBufferPointer {
                        run($0.baseAddress, &plain, .none)
                        run($0.baseAddress, &clamped, clamp)
                    }
                } else {
                    run(nil, &plain, .none)
                    run(nil, &clamped, clamp)
                }
                let expected = plain.map { nanMin(nanMax($0, clamp.lower), clamp.upper) }
                let mismatch = firstBitMismatch(clamped, expected)
                #expect(mismatch == nil, "\(c.name), \(clamp), column buffer \(columnBufferBytes): \(mismatch ?? "")")
            }
        }
    }
}

@Suite("Convolution residual")
struct ConvolutionResidualTests {
    static let cases: [ConvCase] =
        ConvCase.all + [
            ConvCase(
                name: "depthwise MobileNetV2 28×28 stride 1", input: [1, 3, 28, 28], weight: [3, 1, 3, 3],
                parameters: Conv2DParameters(padding: (1, 1, 1, 1), groups: 3), path: .depthwise),
            ConvCase(
                name: "depthwise 14×14 stride 2", input: [2, 3, 14, 14], weight: [3, 1, 3, 3],
                parameters: Conv2DParameters(strides: (2, 2), padding: (1, 1, 1, 1), groups: 3), path: .depthwise),
            ConvCase(
                name: "depthwise 7×7 stride 1 (flattened planes)", input: [2, 3, 7, 7], weight: [3, 1, 3, 3],
                parameters: Conv2DParameters(padding: (1, 1, 1, 1), groups: 3), path: .depthwise),
        ]

    @Test("conv2d with a residual and a clamp equals conv2d, then + residual, then max and min", arguments: cases)
    func residualThenClamp(_ c: ConvCase) {
        var rng = SeededRandom(seed: UInt64(c.input.reduce(17, *) + c.weight.reduce(5, *)))
        let x = rng.floats(c.input.reduce(1, *))
        let w = rng.floats(c.weight.reduce(1, *))
        let bias = c.bias ? rng.floats(c.weight[0]) : nil
        let count = c.parameters.outputShape(inputShape: c.input, weightShape: c.weight).reduce(1, *)
        var residual = rng.floats(count)
        residual[count / 2] = .nan
        for clamp in [ConvolutionClamp.none, .relu, ConvolutionClamp(lower: -0.5, upper: 0.25)] {
            for columnBufferBytes in [ConvolutionKernels.defaultColumnBufferBytes, 3 * c.weight[1...].reduce(4, *)] {
                var plain = [Float](repeating: 0, count: count)
                var fused = [Float](repeating: 0, count: count)
                let run = {
                    (
                        b: UnsafePointer<Float>?, out: UnsafeMutablePointer<Float>, r: UnsafePointer<Float>?,
                        clamp: ConvolutionClamp
                    ) in
                    ConvolutionKernels.conv2d(
                        input: x, inputShape: c.input, weights: w, weightShape: c.weight, bias: b, output: out,
                        parameters: c.parameters, residual: r, clamp: clamp, columnBufferBytes: columnBufferBytes)
                }
                if let bias {
                    bias.withUnsafeBufferPointer {
                        run($0.baseAddress, &plain, nil, .none)
                        run($0.baseAddress, &fused, residual, clamp)
                    }
                } else {
                    run(nil, &plain, nil, .none)
                    run(nil, &fused, residual, clamp)
                }
                let expected = zip(plain, residual).map { nanMin(nanMax($0 + $1, clamp.lower), clamp.upper) }
                let mismatch = firstBitMismatch(fused, expected)
                #expect(mismatch == nil, "\(c.name), \(clamp), column buffer \(columnBufferBytes): \(mismatch ?? "")")
            }
        }
    }
}
