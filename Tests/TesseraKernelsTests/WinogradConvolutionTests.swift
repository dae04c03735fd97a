import CTesseraSIMD
import Testing
import _TesseraTestSupport

@testable import TesseraKernels

/// One Winograd configuration: a 3×3 stride-1 convolution.
struct WinogradCase: Sendable, CustomStringConvertible {
    var name: String
    var input: [Int]
    var outputs: Int
    var padding: (top: Int, bottom: Int, left: Int, right: Int)
    var bias = true
    var residual = false
    var clamp = ConvolutionClamp.none
    /// The tile the kernel picks.
    var tile: Int

    var description: String { name }
    var weight: [Int] { [outputs, input[1], 3, 3] }
    var parameters: Conv2DParameters { Conv2DParameters(padding: padding) }

    static let all: [WinogradCase] = [
        WinogradCase(
            name: "F(4,3) ResNet-like 16→16 pad 1", input: [1, 16, 16, 16], outputs: 16, padding: (1, 1, 1, 1), tile: 4),
        WinogradCase(
            name: "F(4,3) plane not a multiple of 4 (tails), 2 images", input: [2, 17, 15, 13], outputs: 19,
            padding: (1, 1, 1, 1), tile: 4),
        WinogradCase(
            name: "F(4,3) no padding", input: [1, 24, 19, 18], outputs: 20, padding: (0, 0, 0, 0), bias: false, tile: 4),
        WinogradCase(
            name: "F(4,3) asymmetric padding", input: [1, 16, 14, 17], outputs: 24, padding: (0, 2, 1, 0), tile: 4),
        WinogradCase(
            name: "F(4,3) padding 2 (output larger than input)", input: [1, 16, 12, 12], outputs: 16,
            padding: (2, 2, 2, 2), tile: 4),
        WinogradCase(
            name: "F(4,3) residual + ReLU epilogue", input: [2, 32, 14, 14], outputs: 40, padding: (1, 1, 1, 1),
            residual: true, clamp: .relu, tile: 4),
        WinogradCase(
            name: "F(4,3) clamp to [-1, 2] without bias", input: [1, 16, 13, 13], outputs: 16, padding: (1, 1, 1, 1),
            bias: false, clamp: ConvolutionClamp(lower: -1, upper: 2), tile: 4),
        WinogradCase(
            name: "F(4,3) in two chunks of tiles (130×130 plane)", input: [1, 16, 130, 130], outputs: 16,
            padding: (1, 1, 1, 1), tile: 4),
        WinogradCase(
            name: "F(2,3) small plane (7×7)", input: [1, 64, 7, 7], outputs: 72, padding: (1, 1, 1, 1), tile: 2),
        WinogradCase(
            name: "F(2,3) 5×6 plane, residual + ReLU6", input: [2, 16, 5, 6], outputs: 17, padding: (1, 1, 1, 1),
            residual: true, clamp: .relu6, tile: 2),
        WinogradCase(
            name: "F(2,3) no padding, 6×9 output", input: [1, 16, 8, 11], outputs: 16, padding: (0, 0, 0, 0), tile: 2),
    ]
}

/// Runs the convolution (the weight transformed per call, or `prepared`) on seeded data; returns
/// (got, naive reference in Double, the reference's per-element magnitude Σ|w·x| + |bias| + |residual|).
private func runWinograd(_ c: WinogradCase, prepared: WinogradFilter? = nil) -> ([Float], [Double], [Double]) {
    var rng = SeededRandom(seed: UInt64(c.input.reduce(11, *) + c.outputs))
    let x = rng.floats(c.input.reduce(1, *))
    let w = rng.floats(c.weight.reduce(1, *))
    let bias = c.bias ? rng.floats(c.outputs) : nil
    let shape = c.parameters.outputShape(inputShape: c.input, weightShape: c.weight)
    let residual = c.residual ? rng.floats(shape.reduce(1, *)) : nil
    var out = [Float](repeating: .nan, count: shape.reduce(1, *))
    out.withUnsafeMutableBufferPointer { o in
        (bias ?? [0]).withUnsafeBufferPointer { b in
            (residual ?? [0]).withUnsafeBufferPointer { r in
                ConvolutionKernels.conv2d(
                    input: x, inputShape: c.input, weights: w, weightShape: c.weight,
                    bias: bias == nil ? nil : b.baseAddress, output: o.baseAddress!, parameters: c.parameters,
                    residual: residual == nil ? nil : r.baseAddress, clamp: c.clamp, winogradFilter: prepared)
            }
        }
    }
    let (_, sums) = NaiveLinearAlgebra.conv2d(
        x.map(Double.init), c.input, w.map(Double.init), c.weight, bias: bias?.map(Double.init), c.parameters)
    let (_, magnitude) = NaiveLinearAlgebra.conv2d(
        x.map { Double(abs($0)) }, c.input, w.map { Double(abs($0)) }, c.weight, bias: bias?.map { Double(abs($0)) },
        c.parameters)
    let lo = Double(c.clamp.lower)
    let hi = Double(c.clamp.upper)
    var expected = sums
    var scale = magnitude
    for i in expected.indices {
        if let residual {
            expected[i] += Double(residual[i])
            scale[i] += Double(abs(residual[i]))
        }
        expected[i] = Swift.min(Swift.max(expected[i], lo), hi)
    }
    return (out, expected, scale)
}

/// The largest `|got - expected| / scale` over all elements.
private func largestScaledError(_ got: [Float], _ expected: [Double], _ scale: [Double]) -> Double {
    zip(zip(got, expected), scale).map { pair, s in abs(Double(pair.0) - pair.1) / Swift.max(s, 1e-30) }.max() ?? 0
}

@Suite("Winograd convolution")
struct WinogradConvolutionTests {
    @Test("Winograd F(4,3) and F(2,3) match the naive Double definition", arguments: WinogradCase.all)
    func matchesNaive(_ c: WinogradCase) throws {
        try #require(PackedGEMM.isAvailable, "Winograd needs AVX2 + FMA")
        #expect(
            ConvolutionKernels.route(inputShape: c.input, weightShape: c.weight, parameters: c.parameters).winogradTile
                == c.tile)
        let (got, expected, scale) = runWinograd(c)
        // Errors relative to the sum of the magnitudes of each output's terms (Σ|w·x| + |bias| +
        // |residual|): Winograd's transforms scale the rounding of float32 sums by their
        // coefficients (up to 8 in F(4,3)'s Aᵀ). Measured on these cases: F(4,3) ≤ 2.6e-6, F(2,3)
        // ≤ 1e-7.
        let error = largestScaledError(got, expected, scale)
        #expect(error < (c.tile == 4 ? 1e-5 : 1e-6), "\(c.name): largest error \(error) of the terms' magnitude")
        #expect(got.allSatisfy { !$0.isNaN }, "\(c.name): an output was not written")
    }

    @Test("a prepared filter gives the same bits as one transformed in the call")
    func preparedFilter() throws {
        try #require(PackedGEMM.isAvailable)
        let c = WinogradCase.all[1]
        var rng = SeededRandom(seed: UInt64(c.input.reduce(11, *) + c.outputs))
        _ = rng.floats(c.input.reduce(1, *))
        let w = rng.floats(c.weight.reduce(1, *))
        let filter = WinogradFilter(transforming: w, outputChannels: c.outputs, inputChannels: c.input[1], tile: 4)
        #expect(filter.byteCount >= 36 * c.outputs * c.input[1] * 4)
        #expect(runWinograd(c, prepared: filter).0 == runWinograd(c).0)
    }

    @Test("the AVX2 and portable transform bodies agree with the AVX-512 one")
    func bodiesAgree() throws {
        try #require(PackedGEMM.isAvailable)
        var rng = SeededRandom(seed: 5)
        let (o, c) = (11, 5)
        let weights = rng.floats(o * c * 9)
        for m in [2, 4] {
            let count = tessera_winograd_filter_count(Int32(m), o, c)
            var filters: [[Float]] = []
            for variant in [2, 1, 0] {
                var packed = [Float](repeating: .nan, count: count)
                tessera_winograd_transform_filter_variant(Int32(variant), Int32(m), weights, o, c, &packed)
                filters.append(packed)
            }
            #expect(!filters[0].contains { $0.isNaN }, "F(\(m),3) filter: every panel element written")
            for variant in 1...2 {
                let mismatch = firstMismatch(filters[variant], filters[0], rtol: 1e-6, atol: 1e-7)
                #expect(mismatch == nil, "F(\(m),3) filter body \(2 - variant): \(mismatch ?? "")")
            }
        }
        let (channels, h, w) = (3, 11, 13)
        let x = rng.floats(channels * h * w)
        for m in [2, 4] {
            let tilesWide = (w + m - 1) / m
            let tiles = tilesWide * ((h + m - 1) / m)
            let alpha2 = (m + 2) * (m + 2)
            var reference: [Float] = []
            for variant in [2, 1, 0] {
                var v = [Float](repeating: .nan, count: alpha2 * channels * tiles)
                tessera_winograd_transform_input_variant(
                    Int32(variant), Int32(m), x, channels, h, w, 1, 1, tilesWide, 0, tiles, 0, channels, &v)
                var y = [Float](repeating: .nan, count: channels * h * w)
                tessera_winograd_transform_output_variant(
                    Int32(variant), Int32(m), v, channels, 0, channels, tilesWide, 0, tiles, h, w, &y, nil, nil,
                    -.infinity, .infinity)
                let both = v + y
                if reference.isEmpty {
                    reference = both
                } else {
                    // The output transform of transformed input (not of products) sums terms of
                    // up to ~100 that cancel: an absolute bound of a few ulps of those terms.
                    let mismatch = firstMismatch(both, reference, rtol: 1e-6, atol: 1e-4)
                    #expect(mismatch == nil, "F(\(m),3) body \(variant): \(mismatch ?? "")")
                }
            }
        }
    }

    @Test("3×3 stride-1 convolutions with 16 or more channels take Winograd; other shapes do not")
    func pathChoice() throws {
        try #require(PackedGEMM.isAvailable)
        let pad1 = Conv2DParameters(padding: (1, 1, 1, 1))
        let tile = { (input: [Int], weight: [Int], p: Conv2DParameters) in
            ConvolutionKernels.route(inputShape: input, weightShape: weight, parameters: p).winogradTile
        }
        #expect(tile([1, 64, 56, 56], [64, 64, 3, 3], pad1) == 4)
        #expect(tile([1, 256, 14, 14], [256, 256, 3, 3], pad1) == 4)
        #expect(tile([1, 512, 7, 7], [512, 512, 3, 3], pad1) == 2)
        #expect(
            tile([1, 64, 56, 56], [64, 64, 3, 3], Conv2DParameters(strides: (2, 2), padding: (1, 1, 1, 1))) == nil)
        #expect(
            tile([1, 64, 56, 56], [64, 64, 3, 3], Conv2DParameters(dilations: (2, 2), padding: (2, 2, 2, 2))) == nil)
        #expect(tile([1, 64, 56, 56], [64, 32, 3, 3], Conv2DParameters(padding: (1, 1, 1, 1), groups: 2)) == nil)
        #expect(tile([1, 64, 56, 56], [64, 1, 3, 3], Conv2DParameters(padding: (1, 1, 1, 1), groups: 64)) == nil)
        #expect(tile([1, 64, 56, 56], [64, 64, 1, 1], Conv2DParameters()) == nil)
        #expect(tile([1, 64, 56, 56], [64, 64, 5, 5], Conv2DParameters(padding: (2, 2, 2, 2))) == nil)
        #expect(tile([1, 3, 224, 224], [64, 3, 3, 3], pad1) == nil)
        #expect(tile([1, 64, 56, 56], [8, 64, 3, 3], pad1) == nil)
        #expect(
            ConvolutionKernels.route(inputShape: [1, 64, 56, 56], weightShape: [64, 64, 3, 3], parameters: pad1).name
                == "Winograd F(4,3) conv")
    }

    @Test("Winograd filters of adopted weights are transformed once and kept; owned memory is not kept")
    func preparedWeights() {
        let count = 16 * 16 * 9
        let owned = TensorStorage.allocateUnpooled(byteCount: count * 4, zeroed: true)
        let floats = owned.pointer.assumingMemoryBound(to: Float.self)
        for i in 0..<count { floats[i] = Float(i % 7) }
        let adopted = TensorStorage(adopting: owned.pointer, byteCount: count * 4, release: nil)
        let first = PreparedWeights.winograd(adopted, offset: 0, outputChannels: 16, inputChannels: 16, tile: 4)
        let second = PreparedWeights.winograd(adopted, offset: 0, outputChannels: 16, inputChannels: 16, tile: 4)
        #expect(first != nil && first === second)
        let other = PreparedWeights.winograd(adopted, offset: 0, outputChannels: 16, inputChannels: 16, tile: 2)
        #expect(other != nil && other !== first && other?.tile == 2)
        #expect(PreparedWeights.packed(adopted, offset: 0, rows: 16, depth: 144) !== first)
        #expect(PreparedWeights.winograd(owned, offset: 0, outputChannels: 16, inputChannels: 16, tile: 4) == nil)
    }
}
