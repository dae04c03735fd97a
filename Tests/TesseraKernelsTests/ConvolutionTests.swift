import Testing
import _TesseraTestSupport

@testable import TesseraKernels

/// One convolution configuration for the parameterised tests.
struct ConvCase: Sendable, CustomStringConvertible {
    var name: String
    var input: [Int]
    var weight: [Int]
    var parameters: Conv2DParameters
    var bias = true
    var path: ConvolutionKernels.Path

    var description: String { name }

    static let all: [ConvCase] = [
        ConvCase(
            name: "3×3 pad 1", input: [2, 3, 7, 6], weight: [4, 3, 3, 3],
            parameters: Conv2DParameters(padding: (1, 1, 1, 1)), path: .im2col),
        ConvCase(
            name: "3×3 no padding", input: [1, 2, 5, 5], weight: [3, 2, 3, 3], parameters: Conv2DParameters(),
            bias: false, path: .im2col),
        ConvCase(
            name: "stride 2, asymmetric padding", input: [1, 3, 9, 8], weight: [5, 3, 3, 3],
            parameters: Conv2DParameters(strides: (2, 2), padding: (1, 0, 2, 1)), path: .im2col),
        ConvCase(
            name: "stride (1, 3), 2×4 kernel", input: [1, 2, 6, 11], weight: [3, 2, 2, 4],
            parameters: Conv2DParameters(strides: (1, 3), padding: (0, 1, 1, 0)), path: .im2col),
        ConvCase(
            name: "dilation 2", input: [1, 2, 9, 9], weight: [3, 2, 3, 3],
            parameters: Conv2DParameters(dilations: (2, 2), padding: (2, 2, 2, 2)), path: .im2col),
        ConvCase(
            name: "dilation (3, 1), stride 2", input: [1, 2, 10, 7], weight: [2, 2, 2, 3],
            parameters: Conv2DParameters(strides: (2, 2), dilations: (3, 1), padding: (1, 1, 0, 0)), path: .im2col),
        ConvCase(
            name: "groups 2", input: [2, 4, 6, 6], weight: [6, 2, 3, 3],
            parameters: Conv2DParameters(padding: (1, 1, 1, 1), groups: 2), path: .im2col),
        ConvCase(
            name: "single channel", input: [1, 1, 6, 6], weight: [2, 1, 3, 3],
            parameters: Conv2DParameters(padding: (1, 1, 1, 1)), path: .im2col),
        ConvCase(
            name: "padding larger than the image", input: [1, 2, 2, 2], weight: [2, 2, 3, 3],
            parameters: Conv2DParameters(padding: (3, 3, 3, 3)), path: .im2col),
        ConvCase(
            name: "depthwise 3×3", input: [2, 4, 7, 7], weight: [4, 1, 3, 3],
            parameters: Conv2DParameters(padding: (1, 1, 1, 1), groups: 4), path: .depthwise),
        ConvCase(
            name: "depthwise multiplier 2, stride 2", input: [1, 3, 9, 20], weight: [6, 1, 3, 3],
            parameters: Conv2DParameters(strides: (2, 2), padding: (1, 1, 1, 1), groups: 3), path: .depthwise),
        ConvCase(
            name: "depthwise 5×5 dilation 2, wide rows", input: [1, 2, 8, 21], weight: [2, 1, 5, 5],
            parameters: Conv2DParameters(dilations: (2, 2), padding: (4, 4, 4, 4), groups: 2), bias: false,
            path: .depthwise),
        ConvCase(
            name: "1×1", input: [2, 6, 5, 4], weight: [3, 6, 1, 1], parameters: Conv2DParameters(), path: .pointwise),
        ConvCase(
            name: "1×1 groups 3", input: [1, 6, 3, 3], weight: [9, 2, 1, 1],
            parameters: Conv2DParameters(groups: 3), path: .pointwise),
        ConvCase(
            name: "1×1 on a small plane, in blocks of output channels", input: [2, 24, 3, 4],
            weight: [70, 24, 1, 1], parameters: Conv2DParameters(), path: .pointwise),
        ConvCase(
            name: "1×1 in two column tiles", input: [2, 8, 24, 24], weight: [40, 8, 1, 1],
            parameters: Conv2DParameters(), path: .pointwise),
        ConvCase(
            name: "1×1 groups 2 in tiles of 96 columns, the last partial", input: [1, 4, 10, 30],
            weight: [600, 2, 1, 1],
            parameters: Conv2DParameters(groups: 2), path: .pointwise),
        ConvCase(
            name: "1×1 stride 2", input: [1, 4, 6, 6], weight: [3, 4, 1, 1],
            parameters: Conv2DParameters(strides: (2, 2)), path: .im2col),
        ConvCase(
            name: "7×7 stride 2 pad 3 on 3 channels (ResNet-50's first layer), odd width", input: [1, 3, 13, 17],
            weight: [5, 3, 7, 7], parameters: Conv2DParameters(strides: (2, 2), padding: (3, 3, 3, 3)), path: .im2col),
        ConvCase(
            name: "1×1 stride 3 on a ragged plane", input: [2, 5, 8, 11], weight: [6, 5, 1, 1],
            parameters: Conv2DParameters(strides: (3, 3)), path: .im2col),
        ConvCase(
            name: "3×3 on a 7×7 plane: im2col tasks split by columns and output channels", input: [1, 12, 7, 7],
            weight: [72, 12, 3, 3], parameters: Conv2DParameters(padding: (1, 1, 1, 1)), path: .im2col),
        ConvCase(
            name: "1×1 stride 2 in im2col tiles rebalanced across threads (2 of 98 columns, not 112 + 84)",
            input: [1, 16, 28, 28], weight: [64, 16, 1, 1], parameters: Conv2DParameters(strides: (2, 2)),
            path: .im2col),
        ConvCase(
            name: "1×1 in packed blocks of columns, the last partial", input: [2, 64, 30, 30], weight: [80, 64, 1, 1],
            parameters: Conv2DParameters(), path: .pointwise),
    ]
}

/// Runs the kernel on seeded random data and returns (got, naive reference).
private func runConv(_ c: ConvCase, columnBufferBytes: Int = ConvolutionKernels.defaultColumnBufferBytes)
    -> ([Float], [Double])
{
    var rng = SeededRandom(seed: UInt64(c.input.reduce(7, *) + c.weight.reduce(3, *)))
    let x = rng.floats(c.input.reduce(1, *))
    let w = rng.floats(c.weight.reduce(1, *))
    let bias = c.bias ? rng.floats(c.weight[0]) : nil
    let shape = c.parameters.outputShape(inputShape: c.input, weightShape: c.weight)
    var out = [Float](repeating: .nan, count: shape.reduce(1, *))
    out.withUnsafeMutableBufferPointer { outBuffer in
        bias.withUnsafeBufferPointerIfPresent { biasPointer in
            ConvolutionKernels.conv2d(
                input: x, inputShape: c.input, weights: w, weightShape: c.weight, bias: biasPointer,
                output: outBuffer.baseAddress!, parameters: c.parameters, columnBufferBytes: columnBufferBytes)
        }
    }
    let (expectedShape, expected) = NaiveLinearAlgebra.conv2d(
        x.map(Double.init), c.input, w.map(Double.init), c.weight, bias: bias?.map(Double.init), c.parameters)
    precondition(expectedShape == shape, "\(c.name): reference shape \(expectedShape) vs \(shape)")
    return (out, expected)
}

extension Optional where Wrapped == [Float] {
    fileprivate func withUnsafeBufferPointerIfPresent<R>(_ body: (UnsafePointer<Float>?) -> R) -> R {
        switch self {
        case .none: return body(nil)
        case .some(let array): return array.withUnsafeBufferPointer { body($0.baseAddress) }
        }
    }
}

@Suite("Convolution")
struct ConvolutionTests {
    @Test("conv2d matches the naive definition", arguments: ConvCase.all)
    func matchesNaive(_ c: ConvCase) {
        #expect(
            ConvolutionKernels.path(
                channels: c.input[1], kernelHeight: c.weight[2], kernelWidth: c.weight[3], parameters: c.parameters)
                == c.path)
        let (got, expected) = runConv(c)
        let mismatch = firstMismatch(got.map(Double.init), expected, rtol: 1e-5, atol: 1e-5)
        #expect(mismatch == nil, "\(c.name): \(mismatch ?? "")")
    }

    @Test("tiled im2col (tiny column buffer) gives the same result", arguments: [1, 3, 7, 50])
    func tiled(tilePositions: Int) {
        // Tiles of 1, a few, or 50 output positions: tiles start and end mid-row.
        for c in ConvCase.all where c.path == .im2col {
            let patchBytes = c.weight[1] * c.weight[2] * c.weight[3] * MemoryLayout<Float>.stride
            let (got, expected) = runConv(c, columnBufferBytes: tilePositions * patchBytes)
            let mismatch = firstMismatch(got.map(Double.init), expected, rtol: 1e-5, atol: 1e-5)
            #expect(mismatch == nil, "\(c.name), tiles of \(tilePositions): \(mismatch ?? "")")
        }
    }

    @Test("pointwise tiles: about 128 KiB of output, multiples of 16, two tiles for small planes")
    func pointwiseTiles() {
        #expect(ConvolutionKernels.pointwiseTileColumns(outputChannels: 96, positions: 12544) == 336)
        #expect(ConvolutionKernels.pointwiseTileColumns(outputChannels: 40, positions: 576) == 288)
        #expect(ConvolutionKernels.pointwiseTileColumns(outputChannels: 300, positions: 300) == 96)
        #expect(ConvolutionKernels.pointwiseTileColumns(outputChannels: 1280, positions: 49) == 49)
        #expect(ConvolutionKernels.pointwiseTileColumns(outputChannels: 8, positions: 100) == 64)
        #expect(ConvolutionKernels.pointwiseBlockRows(outputChannels: 1280, budget: 2) == 320)
        #expect(ConvolutionKernels.pointwiseBlockRows(outputChannels: 70, budget: 2) == 32)
        #expect(ConvolutionKernels.pointwiseBlockRows(outputChannels: 20, budget: 4) == 16)
    }

    @Test("output shapes follow the PyTorch formula")
    func outputShapes() {
        let resnet = Conv2DParameters(padding: (1, 1, 1, 1))
        #expect(resnet.outputShape(inputShape: [1, 64, 56, 56], weightShape: [64, 64, 3, 3]) == [1, 64, 56, 56])
        let stem = Conv2DParameters(strides: (2, 2), padding: (3, 3, 3, 3))
        #expect(stem.outputShape(inputShape: [1, 3, 224, 224], weightShape: [64, 3, 7, 7]) == [1, 64, 112, 112])
        #expect(
            Conv2DParameters(strides: (2, 2)).outputShape(inputShape: [1, 3, 7, 7], weightShape: [8, 3, 3, 3]) == [
                1, 8, 3, 3,
            ])
        #expect(
            Conv2DParameters(dilations: (2, 2)).outputShape(inputShape: [1, 1, 5, 5], weightShape: [1, 1, 3, 3])
                == [1, 1, 1, 1])
    }

    @Test("an empty batch or zero output channels write nothing")
    func empty() {
        var out: [Float] = [42]
        let x: [Float] = [1, 2, 3, 4]
        let w: [Float] = [1]
        ConvolutionKernels.conv2d(
            input: x, inputShape: [0, 1, 2, 2], weights: w, weightShape: [1, 1, 1, 1], bias: nil, output: &out,
            parameters: Conv2DParameters())
        ConvolutionKernels.conv2d(
            input: x, inputShape: [1, 1, 2, 2], weights: w, weightShape: [0, 1, 1, 1], bias: nil, output: &out,
            parameters: Conv2DParameters())
        #expect(out == [42])
    }

    @Test(
        "NumPy fixtures: plain, stride, dilation, groups, depthwise, 1×1",
        arguments: ["plain3x3", "stride2", "dilation2", "groups2", "depthwise", "pointwise"])
    func numpyFixtures(name: String) throws {
        let x = try Fixtures.npy("kernels/conv_\(name)_x.npy")
        let w = try Fixtures.npy("kernels/conv_\(name)_w.npy")
        let expected = try Fixtures.npy("kernels/conv_\(name)_out.npy")
        let bias = (try? Fixtures.npy("kernels/conv_\(name)_bias.npy"))?.floats
        let v = try Fixtures.npy("kernels/conv_\(name)_params.npy").ints
        let parameters = Conv2DParameters(
            strides: (v[0], v[1]), dilations: (v[2], v[3]), padding: (v[4], v[5], v[6], v[7]), groups: v[8])
        let shape = parameters.outputShape(inputShape: x.shape, weightShape: w.shape)
        #expect(shape == expected.shape)
        var out = [Float](repeating: .nan, count: expected.count)
        out.withUnsafeMutableBufferPointer { outBuffer in
            bias.withUnsafeBufferPointerIfPresent { biasPointer in
                ConvolutionKernels.conv2d(
                    input: x.floats, inputShape: x.shape, weights: w.floats, weightShape: w.shape, bias: biasPointer,
                    output: outBuffer.baseAddress!, parameters: parameters)
            }
        }
        #expect(firstMismatch(out, expected.floats, rtol: 1e-5, atol: 1e-5) == nil)
    }
}
