import Testing
import _TesseraTestSupport

@testable import TesseraKernels

/// ``ConvolutionKernels/conv2dMeans(input:inputShape:weights:weightShape:bias:residual:clamp:parameters:packedWeights:output:)``:
/// a pointwise convolution and the global average pool after it, against the convolution run
/// alone and its output reduced (bit for bit), and against a `Double` evaluation.
@Suite(
    "Convolution with its global mean",
    .enabled(if: PackedGEMM.isPreferred, "the fused pool runs on the packed micro-kernel"))
struct ConvolutionMeanTests {
    struct Case: CustomStringConvertible {
        var input: [Int]
        var outputs: Int
        var residual = false
        var clamp = ConvolutionClamp(lower: 0, upper: 6)
        var prepared = false

        var description: String {
            "\(input) → \(outputs)\(residual ? " + residual" : "") \(clamp)\(prepared ? ", prepared panels" : "")"
        }
    }

    static let cases: [Case] = [
        // MobileNetV2's last convolution and pool (eight blocks of 160 channels on two threads).
        Case(input: [1, 320, 7, 7], outputs: 1280, prepared: true),
        // Two images, 100 channels: a last block that is not a whole panel.
        Case(input: [2, 12, 7, 7], outputs: 100, residual: true),
        // A plane wider than one tile, no clamp, ResNet-style residual.
        Case(input: [1, 16, 9, 11], outputs: 40, residual: true, clamp: .none),
        // A large plane: one panel per block.
        Case(input: [1, 8, 64, 80], outputs: 24),
    ]

    /// Values in [-2, 2) in steps of 1/8.
    static func values(_ count: Int, seed: UInt64) -> [Float] {
        var random = SeededRandom(seed: seed)
        return (0..<count).map { _ in Float(Int.random(in: -16..<16, using: &random)) / 8 }
    }

    @Test("the fused pool gives the bits of the convolution and the mean run one after another", arguments: cases)
    func matchesUnfused(_ c: Case) {
        let (n, channels, h, w) = (c.input[0], c.input[1], c.input[2], c.input[3])
        let weightShape = [c.outputs, channels, 1, 1]
        let outputShape = [n, c.outputs, h, w]
        #expect(ConvolutionKernels.runsWithMean(inputShape: c.input, weightShape: weightShape, parameters: .init()))
        let x = Self.values(c.input.reduce(1, *), seed: 1)
        let weights = Self.values(c.outputs * channels, seed: 2).map { $0 / 4 }
        let bias = Self.values(c.outputs, seed: 3)
        let residual = c.residual ? Self.values(outputShape.reduce(1, *), seed: 4) : nil
        var product = [Float](repeating: .nan, count: outputShape.reduce(1, *))
        product.withUnsafeMutableBufferPointer { out in
            ConvolutionKernels.conv2d(
                input: x, inputShape: c.input, weights: weights, weightShape: weightShape, bias: bias,
                output: out.baseAddress!, parameters: Conv2DParameters(), residual: residual, clamp: c.clamp)
        }
        var expected = [Float](repeating: .nan, count: n * c.outputs)
        product.withUnsafeBytes { p in
            expected.withUnsafeMutableBytes { e in
                ReductionKernels.reduce(
                    .mean, input: p.baseAddress!, layout: StridedLayout(contiguous: outputShape), type: .float32,
                    axes: [2, 3], output: e.baseAddress!, outputType: .float32)
            }
        }
        let packed =
            c.prepared ? PackedGEMMOperand(packing: weights, lda: channels, rows: c.outputs, depth: channels) : nil
        var got = [Float](repeating: 12345, count: n * c.outputs)
        got.withUnsafeMutableBufferPointer { out in
            ConvolutionKernels.conv2dMeans(
                input: x, inputShape: c.input, weights: weights, weightShape: weightShape, bias: bias,
                residual: residual, clamp: c.clamp, parameters: Conv2DParameters(), packedWeights: packed,
                output: out.baseAddress!)
        }
        let mismatches = zip(got, expected).filter { $0.bitPattern != $1.bitPattern }.count
        #expect(mismatches == 0, "\(c): \(mismatches) of \(got.count) differ")

        // The same means from a Double evaluation of the convolution, epilogue and mean.
        let positions = h * w
        var naive = [Double](repeating: 0, count: n * c.outputs)
        for image in 0..<n {
            for o in 0..<c.outputs {
                var sum = 0.0
                for p in 0..<positions {
                    var v = Double(bias[o])
                    for k in 0..<channels {
                        v += Double(weights[o * channels + k]) * Double(x[(image * channels + k) * positions + p])
                    }
                    if let residual { v += Double(residual[(image * c.outputs + o) * positions + p]) }
                    sum += Swift.min(Swift.max(v, Double(c.clamp.lower)), Double(c.clamp.upper))
                }
                naive[image * c.outputs + o] = sum / Double(positions)
            }
        }
        let mismatch = firstMismatch(got.map(Double.init), naive, rtol: 1e-5, atol: 1e-5)
        #expect(mismatch == nil, "\(c): \(mismatch ?? "")")
        #expect(got.contains { $0 != 0 })
    }

    @Test("blocks of whole panels that fit the scratch block, about four per thread")
    func blockRows() {
        #expect(ConvolutionKernels.meanBlockRows(outputChannels: 1280, positions: 49, budget: 2) == 160)
        #expect(ConvolutionKernels.meanBlockRows(outputChannels: 100, positions: 49, budget: 2) == 16)
        #expect(ConvolutionKernels.meanBlockRows(outputChannels: 2048, positions: 49, budget: 1) == 160)
        #expect(ConvolutionKernels.meanBlockRows(outputChannels: 64, positions: 100_000, budget: 2) == 8)
    }

    @Test("only pointwise convolutions with output positions run with their mean")
    func runsWithMean() {
        #expect(
            !ConvolutionKernels.runsWithMean(
                inputShape: [1, 8, 7, 7], weightShape: [16, 8, 3, 3],
                parameters: Conv2DParameters(padding: (1, 1, 1, 1))))
        #expect(
            !ConvolutionKernels.runsWithMean(
                inputShape: [1, 8, 7, 7], weightShape: [8, 1, 1, 1], parameters: Conv2DParameters(groups: 8)))
        #expect(
            !ConvolutionKernels.runsWithMean(
                inputShape: [1, 8, 0, 7], weightShape: [16, 8, 1, 1], parameters: .init()))
        #expect(
            ConvolutionKernels.runsWithMean(inputShape: [1, 8, 7, 7], weightShape: [16, 8, 1, 1], parameters: .init()))
    }
}
