import TesseraKernels
import Testing
import _TesseraTestSupport

/// One pooling configuration for the parameterised tests.
struct PoolCase: Sendable, CustomStringConvertible {
    var name: String
    var input: [Int]
    var parameters: Pool2DParameters
    var description: String { name }

    static let all: [PoolCase] = [
        PoolCase(name: "2×2", input: [2, 3, 6, 8], parameters: Pool2DParameters(kernel: (2, 2))),
        PoolCase(
            name: "3×3 stride 2 pad 1", input: [1, 4, 9, 9],
            parameters: Pool2DParameters(kernel: (3, 3), strides: (2, 2), padding: (1, 1, 1, 1))),
        PoolCase(
            name: "3×3 stride 1 pad 1", input: [1, 2, 5, 7],
            parameters: Pool2DParameters(kernel: (3, 3), strides: (1, 1), padding: (1, 1, 1, 1))),
        PoolCase(
            name: "asymmetric 2×3, padding (1, 0, 0, 1)", input: [1, 2, 7, 6],
            parameters: Pool2DParameters(kernel: (2, 3), strides: (2, 1), padding: (1, 0, 0, 1))),
        // Wider than one and two 16-column vectors (the AVX-512 plane kernel's full and masked blocks).
        PoolCase(
            name: "3×3 stride 2 pad 1, 37 wide", input: [1, 3, 20, 37],
            parameters: Pool2DParameters(kernel: (3, 3), strides: (2, 2), padding: (1, 1, 1, 1))),
        // 3-wide windows at column stride 2 take the separable NaN-free kernel: ResNet-50's pool,
        // and 2-row windows at row stride 1 with the padding on one side only.
        PoolCase(
            name: "3×3 stride 2 pad 1, 112 × 112", input: [1, 2, 112, 112],
            parameters: Pool2DParameters(kernel: (3, 3), strides: (2, 2), padding: (1, 1, 1, 1))),
        PoolCase(
            name: "2×3 strides (1, 2), padding (0, 1, 1, 0), 40 wide", input: [1, 2, 10, 40],
            parameters: Pool2DParameters(kernel: (2, 3), strides: (1, 2), padding: (0, 1, 1, 0))),
        PoolCase(
            name: "2×2 stride 1, 35 wide", input: [1, 2, 6, 35],
            parameters: Pool2DParameters(kernel: (2, 2), strides: (1, 1))),
        PoolCase(
            name: "ceil mode", input: [1, 2, 7, 5],
            parameters: Pool2DParameters(kernel: (2, 2), strides: (2, 2), ceilMode: true)),
        PoolCase(
            name: "ceil mode with padding", input: [1, 1, 6, 6],
            parameters: Pool2DParameters(kernel: (3, 3), strides: (2, 2), padding: (1, 1, 1, 1), ceilMode: true)),
    ]
}

private func runPool(_ c: PoolCase, max: Bool, countIncludePad: Bool) -> ([Float], [Double]) {
    var rng = SeededRandom(seed: UInt64(c.input.reduce(5, *)))
    let x = rng.floats(c.input.reduce(1, *))
    let shape = c.parameters.outputShape(inputShape: c.input)
    var out = [Float](repeating: .nan, count: shape.reduce(1, *))
    if max {
        PoolingKernels.maxPool2d(input: x, inputShape: c.input, output: &out, parameters: c.parameters)
    } else {
        PoolingKernels.averagePool2d(
            input: x, inputShape: c.input, output: &out, parameters: c.parameters, countIncludePad: countIncludePad)
    }
    let expected = NaiveLinearAlgebra.pool2d(
        x.map(Double.init), c.input, outputShape: shape, c.parameters, max: max, countIncludePad: countIncludePad)
    return (out, expected)
}

@Suite("Pooling")
struct PoolingTests {
    @Test("max pooling matches the naive definition", arguments: PoolCase.all)
    func maxPool(_ c: PoolCase) {
        let (got, expected) = runPool(c, max: true, countIncludePad: false)
        #expect(firstMismatch(got.map(Double.init), expected, rtol: 0, atol: 0) == nil)
    }

    @Test("dilated max pooling matches the naive definition")
    func dilatedMaxPool() {
        let c = PoolCase(
            name: "dilated", input: [1, 2, 9, 10],
            parameters: Pool2DParameters(kernel: (2, 3), strides: (1, 2), padding: (1, 1, 1, 1), dilations: (3, 2)))
        let (got, expected) = runPool(c, max: true, countIncludePad: false)
        #expect(firstMismatch(got.map(Double.init), expected, rtol: 0, atol: 0) == nil)
    }

    @Test("average pooling matches the naive definition", arguments: PoolCase.all, [false, true])
    func averagePool(_ c: PoolCase, countIncludePad: Bool) {
        let (got, expected) = runPool(c, max: false, countIncludePad: countIncludePad)
        #expect(firstMismatch(got.map(Double.init), expected, rtol: 1e-6, atol: 1e-6) == nil)
    }

    @Test("max pooling of a wide plane propagates NaN where a window holds one")
    func maxNaNWide() {
        let (h, w) = (9, 40)
        var x = (0..<(h * w)).map { Float(($0 * 37) % 101) }
        x[3 * w + 17] = .nan
        let p = Pool2DParameters(kernel: (3, 3), strides: (2, 2), padding: (1, 1, 1, 1))
        let shape = p.outputShape(inputShape: [1, 1, h, w])
        var out = [Float](repeating: 0, count: shape.reduce(1, *))
        PoolingKernels.maxPool2d(input: x, inputShape: [1, 1, h, w], output: &out, parameters: p)
        for y in 0..<shape[2] {
            for xo in 0..<shape[3] {
                let rows = (2 * y - 1)...(2 * y + 1)
                let columns = (2 * xo - 1)...(2 * xo + 1)
                let holdsNaN = rows.contains(3) && columns.contains(17)
                #expect(out[y * shape[3] + xo].isNaN == holdsNaN, "output (\(y), \(xo))")
            }
        }
    }

    @Test("max pooling keeps the first of equal maxima, -0 before +0 and +0 before -0, with and without NaN")
    func maxSignedZeros() {
        // Windows of zeros of both signs (and negatives): the result is the first zero in (i, j)
        // order, bit for bit, on the NaN-free path and on the path that keeps NaN.
        let (h, w) = (12, 37)
        let p = Pool2DParameters(kernel: (3, 3), strides: (2, 2), padding: (1, 1, 1, 1))
        let shape = p.outputShape(inputShape: [1, 1, h, w])
        for withNaN in [false, true] {
            var x = (0..<(h * w)).map { i -> Float in
                switch (i * 7) % 5 {
                case 0: return -0.0
                case 1, 3: return 0.0
                default: return -Float(i % 3 + 1)
                }
            }
            if withNaN { x[h * w - 1] = .nan }
            var out = [Float](repeating: 1, count: shape.reduce(1, *))
            PoolingKernels.maxPool2d(input: x, inputShape: [1, 1, h, w], output: &out, parameters: p)
            for y in 0..<shape[2] {
                for xo in 0..<shape[3] {
                    var best = -Float.infinity
                    for i in (2 * y - 1)...(2 * y + 1) where i >= 0 && i < h {
                        for j in (2 * xo - 1)...(2 * xo + 1) where j >= 0 && j < w {
                            let v = x[i * w + j]
                            if v > best || v.isNaN { best = v }
                        }
                    }
                    let got = out[y * shape[3] + xo]
                    #expect(
                        got.bitPattern == best.bitPattern || (got.isNaN && best.isNaN),
                        "NaN \(withNaN), output (\(y), \(xo)): \(got) against \(best)")
                }
            }
        }
    }

    @Test("max pooling propagates NaN")
    func maxNaN() {
        let x: [Float] = [1, .nan, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]
        var out = [Float](repeating: 0, count: 4)
        PoolingKernels.maxPool2d(
            input: x, inputShape: [1, 1, 4, 4], output: &out, parameters: Pool2DParameters(kernel: (2, 2)))
        #expect(out[0].isNaN && out[1] == 8 && out[2] == 14 && out[3] == 16)
    }

    @Test("global average pooling averages each plane", arguments: [[2, 3, 7, 7], [1, 1, 1, 1], [1, 2, 13, 5]])
    func globalAverage(shape: [Int]) {
        var rng = SeededRandom(seed: 3)
        let x = rng.floats(shape.reduce(1, *))
        var out = [Float](repeating: .nan, count: shape[0] * shape[1])
        PoolingKernels.globalAveragePool2d(input: x, inputShape: shape, output: &out)
        let size = shape[2] * shape[3]
        let expected = (0..<(shape[0] * shape[1])).map { plane in
            x[(plane * size)..<((plane + 1) * size)].map(Double.init).reduce(0, +) / Double(size)
        }
        #expect(firstMismatch(out.map(Double.init), expected, rtol: 1e-5, atol: 1e-6) == nil)
    }

    @Test("ceil-mode output sizes follow PyTorch")
    func ceilShapes() {
        #expect(
            Pool2DParameters(kernel: (3, 3), strides: (2, 2), ceilMode: true).outputShape(inputShape: [1, 1, 6, 6]) == [
                1, 1, 3, 3,
            ])
        #expect(
            Pool2DParameters(kernel: (3, 3), strides: (2, 2)).outputShape(inputShape: [1, 1, 6, 6]) == [1, 1, 2, 2])
        // The last window would start in the trailing padding: dropped.
        #expect(
            Pool2DParameters(kernel: (2, 2), strides: (2, 2), padding: (1, 1, 1, 1), ceilMode: true)
                .outputShape(inputShape: [1, 1, 4, 4]) == [1, 1, 3, 3])
    }

    @Test(
        "NumPy fixtures: max and average pooling",
        arguments: ["max3x3s2", "max2x2ceil", "avg3x3pad", "avg3x3nopadcount", "avgceil"])
    func numpyFixtures(name: String) throws {
        let x = try Fixtures.npy("kernels/pool_\(name)_x.npy")
        let expected = try Fixtures.npy("kernels/pool_\(name)_out.npy")
        let v = try Fixtures.npy("kernels/pool_\(name)_params.npy").ints
        let parameters = Pool2DParameters(
            kernel: (v[0], v[1]), strides: (v[2], v[3]), padding: (v[4], v[5], v[6], v[7]), ceilMode: v[8] != 0)
        #expect(parameters.outputShape(inputShape: x.shape) == expected.shape)
        var out = [Float](repeating: .nan, count: expected.count)
        if name.hasPrefix("max") {
            PoolingKernels.maxPool2d(input: x.floats, inputShape: x.shape, output: &out, parameters: parameters)
        } else {
            PoolingKernels.averagePool2d(
                input: x.floats, inputShape: x.shape, output: &out, parameters: parameters, countIncludePad: v[9] != 0)
        }
        #expect(firstMismatch(out, expected.floats, rtol: 1e-6, atol: 1e-6) == nil)
    }
}
