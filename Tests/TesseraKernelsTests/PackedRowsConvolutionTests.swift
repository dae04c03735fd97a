import Testing
import _TesseraTestSupport

@testable import TesseraKernels

/// ``ConvolutionRoute/packedRows``: an image model's first convolution read from the input rows
/// in place, against the naive definition and against the im2col path's bits.
@Suite("Convolution: input rows in place")
struct PackedRowsConvolutionTests {
    struct Case: Sendable, CustomStringConvertible {
        var name: String
        var input: [Int]
        var weight: [Int]
        var parameters: Conv2DParameters
        var residual = false
        var clamp = ConvolutionClamp.none
        var description: String { name }
    }

    static let cases: [Case] = [
        Case(
            name: "MobileNetV2's first layer: 3×3 stride 2 pad 1, relu6", input: [1, 3, 30, 34],
            weight: [20, 3, 3, 3], parameters: Conv2DParameters(strides: (2, 2), padding: (1, 1, 1, 1)),
            clamp: .relu6),
        Case(
            name: "ResNet-50's first layer: 7×7 stride 2 pad 3, two images, relu", input: [2, 3, 37, 70],
            weight: [9, 3, 7, 7], parameters: Conv2DParameters(strides: (2, 2), padding: (3, 3, 3, 3)), clamp: .relu),
        Case(
            name: "stride 1, one channel, 97 columns (two tiles and a 1-column tail)", input: [1, 1, 9, 97],
            weight: [5, 1, 3, 3], parameters: Conv2DParameters(padding: (1, 1, 1, 1))),
        Case(
            name: "strides (3, 2), a 5×3 kernel, asymmetric padding, a residual", input: [1, 4, 20, 50],
            weight: [16, 4, 5, 3], parameters: Conv2DParameters(strides: (3, 2), padding: (2, 0, 0, 3)),
            residual: true),
        Case(
            name: "left padding wider than the kernel: every column shifted", input: [1, 2, 8, 40],
            weight: [8, 2, 3, 3], parameters: Conv2DParameters(strides: (2, 2), padding: (1, 1, 4, 4)),
            residual: true, clamp: ConvolutionClamp(lower: -0.5, upper: 0.5)),
        Case(
            name: "padding above and below taller than the image", input: [1, 3, 2, 33],
            weight: [8, 3, 3, 3], parameters: Conv2DParameters(padding: (3, 3, 1, 1))),
    ]

    @Test("matches the naive definition and the im2col path's bits", arguments: cases)
    func direct(_ c: Case) {
        let outputShape = c.parameters.outputShape(inputShape: c.input, weightShape: c.weight)
        let g = ConvGeometry(input: c.input, weight: c.weight, output: outputShape, parameters: c.parameters)
        #expect(ConvolutionKernels.takesPackedRows(g))
        if PackedGEMM.isPreferred && ConvolutionKernels.packedGEMMEnabled {
            #expect(ConvolutionKernels.route(g) == .packedRows)
        }
        var rng = SeededRandom(seed: UInt64(c.input.reduce(11, *) + c.weight.reduce(5, *)))
        let x = rng.floats(c.input.reduce(1, *))
        let w = rng.floats(c.weight.reduce(1, *))
        let bias = rng.floats(c.weight[0])
        let count = outputShape.reduce(1, *)
        let residual = c.residual ? rng.floats(count) : nil
        let packed = PackedGEMMOperand(packing: w, lda: g.patchSize, rows: g.o, depth: g.patchSize)
        func run(_ body: (ConvEpilogue, UnsafeMutablePointer<Float>) -> Void) -> [Float] {
            var out = [Float](repeating: .nan, count: count)
            bias.withUnsafeBufferPointer { b in
                out.withUnsafeMutableBufferPointer { o in
                    if let residual {
                        residual.withUnsafeBufferPointer { r in
                            body(
                                ConvEpilogue(
                                    bias: b.baseAddress, residual: r.baseAddress, clamp: c.clamp,
                                    positions: g.outputPositions), o.baseAddress!)
                        }
                    } else {
                        body(
                            ConvEpilogue(
                                bias: b.baseAddress, residual: nil, clamp: c.clamp, positions: g.outputPositions),
                            o.baseAddress!)
                    }
                }
            }
            return out
        }
        let direct = run { epilogue, out in
            ConvolutionKernels.packedRowsConv(g, input: x, packed: packed, output: out, epilogue: epilogue)
        }
        let im2col = run { epilogue, out in
            ConvolutionKernels.packedIm2colGEMM(
                g, input: x, packed: packed, output: out, epilogue: epilogue,
                columnBufferBytes: ConvolutionKernels.defaultColumnBufferBytes)
        }
        #expect(direct.map(\.bitPattern) == im2col.map(\.bitPattern), "\(c.name)")
        let (_, naive) = NaiveLinearAlgebra.conv2d(
            x.map(Double.init), c.input, w.map(Double.init), c.weight, bias: bias.map(Double.init), c.parameters)
        let expected = naive.enumerated().map { index, value -> Double in
            let sum = value + (residual.map { Double($0[index]) } ?? 0)
            return Swift.min(Double(c.clamp.upper), Swift.max(Double(c.clamp.lower), sum))
        }
        let mismatch = firstMismatch(direct.map(Double.init), expected, rtol: 1e-5, atol: 1e-5)
        #expect(mismatch == nil, "\(c.name): \(mismatch ?? "")")
    }

    @Test("other geometries keep their routes")
    func routes() {
        func geometry(_ input: [Int], _ weight: [Int], _ parameters: Conv2DParameters) -> ConvGeometry {
            ConvGeometry(
                input: input, weight: weight, output: parameters.outputShape(inputShape: input, weightShape: weight),
                parameters: parameters)
        }
        // Five channels, a dilation, stride 3 across, 15 output columns, a pointwise kernel, groups.
        #expect(!ConvolutionKernels.takesPackedRows(geometry([1, 5, 20, 40], [8, 5, 3, 3], Conv2DParameters())))
        #expect(
            !ConvolutionKernels.takesPackedRows(
                geometry([1, 3, 20, 40], [8, 3, 3, 3], Conv2DParameters(dilations: (2, 2)))))
        #expect(
            !ConvolutionKernels.takesPackedRows(
                geometry([1, 3, 20, 60], [8, 3, 3, 3], Conv2DParameters(strides: (1, 3)))))
        #expect(!ConvolutionKernels.takesPackedRows(geometry([1, 3, 20, 17], [8, 3, 3, 3], Conv2DParameters())))
        #expect(!ConvolutionKernels.takesPackedRows(geometry([1, 3, 20, 40], [8, 3, 1, 1], Conv2DParameters())))
        #expect(
            !ConvolutionKernels.takesPackedRows(
                geometry([1, 4, 20, 40], [8, 2, 3, 3], Conv2DParameters(groups: 2))))
    }
}
