import CTesseraSIMD

/// Depthwise convolution (`groups == C`): each output channel `o` reads only input channel
/// `o / multiplier`, so there is no reduction over channels for a GEMM to speed up.
///
/// Each output element is `bias`, then `acc = acc + w · x` for each kernel tap whose input lies
/// inside the image, in `(i, j)` order (taps in the padding are skipped, not added as zeros),
/// then the clamp. With AVX2 the C kernel computes a block of 8 or 16 output columns of a row
/// in one register across all the taps (masked loads and adds at the borders), so each output
/// is stored once; without it, the Swift loop below runs the same arithmetic in the same order
/// one tap at a time over the row. Small planes that keep their size at stride 1 (7 × 7) are
/// flattened instead: at most four 16-lane vectors of positions per plane, each tap one masked
/// load and add per vector, the masks built once for every plane of a chunk (AVX-512,
/// `tessera_depthwise_flat_planes_f32`; the same bits). Without a residual, the other planes go to
/// `tessera_depthwise_planes_f32`, which runs 3 × 3 planes two at a time (the same bits; one
/// plane's chains of dependent adds leave the vector units idle). Planes (`N × O` of them) run in
/// parallel, in chunks of an even number.
enum DepthwiseConvolution {
    static func run(
        _ g: ConvGeometry, input: UnsafePointer<Float>, weights: UnsafePointer<Float>,
        output: UnsafeMutablePointer<Float>, epilogue: ConvEpilogue
    ) {
        let multiplier = g.o / g.c
        let positions = g.outputPositions
        let p = g.parameters
        let valid = validColumns(kernelWidth: g.kw, width: g.w, outputWidth: g.ow, parameters: p)
        var geometry = tessera_depthwise_geometry(
            h: g.h, w: g.w, kh: g.kh, kw: g.kw, oh: g.oh, ow: g.ow, sh: p.strideHeight, sw: p.strideWidth,
            pt: p.padTop, pl: p.padLeft, dh: p.dilationHeight, dw: p.dilationWidth)
        let bias = epilogue.bias
        // With a residual, the kernel writes the sums and the epilogue pass follows per plane,
        // while the plane is in cache.
        let clampInKernel = epilogue.residual == nil
        let (lower, upper) = clampInKernel ? epilogue.clamp.kernelBounds : (-.infinity, .infinity)
        // ~0.07 ns per tap and output on 3×3 stride 1 planes of 14² and more, up to 0.19 on 7².
        let cost = ParallelCost.perItem(nanoseconds: Double(positions * g.kh * g.kw) * 0.1 + 50)
        let useC = SIMDMath.hasAVX2FMA
        // Small planes of the same size in and out (MobileNetV2's 7 × 7): flattened, the
        // masks built once per chunk of planes rather than per plane and row.
        let flat = useC && flattensPlanes(g)
        let planeCost = flat ? ParallelCost.perItem(nanoseconds: Double(g.kh * g.kw) * 4 + 10) : cost
        valid.withUnsafeBufferPointer { valid in
            withUnsafePointer(to: &geometry) { geometry in
                // Chunks of an even number of planes: the C kernels run 3 × 3 planes in pairs.
                parallelFor(count: g.n * g.o, cost: planeCost, alignment: 2) { planes in
                    if flat
                        && tessera_depthwise_flat_planes_f32(
                            input, weights, bias, output, planes.lowerBound, planes.count, g.o, g.c, multiplier,
                            geometry, lower, upper) != 0
                    {
                        if clampInKernel { return }
                        for plane in planes {
                            epilogue.apply(
                                output, plane: plane, channel: plane % g.o, columns: 0..<positions, addBias: false)
                        }
                        return
                    }
                    if useC && clampInKernel
                        && tessera_depthwise_planes_f32(
                            input, weights, bias, output, planes.lowerBound, planes.count, g.o, g.c, multiplier,
                            geometry, valid.baseAddress!, lower, upper) != 0
                    {
                        return
                    }
                    for plane in planes {
                        let image = plane / g.o
                        let channel = plane % g.o
                        let source = input + (image * g.c + channel / multiplier) * g.h * g.w
                        let kernel = weights + channel * g.kh * g.kw
                        let target = output + plane * positions
                        let planeBias = bias?[channel] ?? 0
                        if useC {
                            tessera_depthwise_plane_f32(
                                source, kernel, planeBias, target, geometry, valid.baseAddress!, lower, upper)
                            if clampInKernel { continue }
                        } else {
                            plane2D(
                                source, kernel: kernel, bias: planeBias, output: target, geometry: g,
                                valid: valid.baseAddress!)
                        }
                        epilogue.apply(output, plane: plane, channel: channel, columns: 0..<positions, addBias: false)
                    }
                }
            }
        }
    }

    /// For each kernel column `j`, the output columns `[valid[2j], valid[2j + 1])` whose input
    /// column lies inside the image: the same for every row and plane, so worked out once per
    /// call (the C kernels' `valid` argument).
    static func validColumns(kernelWidth: Int, width: Int, outputWidth: Int, parameters p: Conv2DParameters) -> [Int] {
        var valid = [Int](repeating: 0, count: 2 * kernelWidth)
        for j in 0..<kernelWidth {
            let range = ConvGeometry.validRange(
                lower: 0, upper: outputWidth, offset: j * p.dilationWidth - p.padLeft, stride: p.strideWidth,
                extent: width)
            valid[2 * j] = range.lowerBound
            valid[2 * j + 1] = range.upperBound
        }
        return valid
    }

    /// Whether the planes take `tessera_depthwise_flat_planes_f32` (with AVX-512): at most 64
    /// positions, stride 1, the output the input's size, at most 25 taps.
    static func flattensPlanes(_ g: ConvGeometry) -> Bool {
        flattensPlanes(g.parameters, height: g.h, width: g.w, outputHeight: g.oh, outputWidth: g.ow, taps: g.kh * g.kw)
    }

    /// ``flattensPlanes(_:)`` from the sizes themselves.
    static func flattensPlanes(
        _ p: Conv2DParameters, height: Int, width: Int, outputHeight: Int, outputWidth: Int, taps: Int
    ) -> Bool {
        p.strideHeight == 1 && p.strideWidth == 1 && outputHeight == height && outputWidth == width
            && outputHeight * outputWidth <= 64 && taps <= Int(TESSERA_DW_FLAT_TAPS)
    }

    /// One output plane from one input plane and one `kH × kW` kernel, tap by tap over each
    /// row (the portable path).
    static func plane2D(
        _ source: UnsafePointer<Float>, kernel: UnsafePointer<Float>, bias: Float, output: UnsafeMutablePointer<Float>,
        geometry g: ConvGeometry, valid: UnsafePointer<Int>
    ) {
        let p = g.parameters
        for y in 0..<g.oh {
            let row = output + y * g.ow
            row.update(repeating: bias, count: g.ow)
            for i in 0..<g.kh {
                let inputRow = y * p.strideHeight - p.padTop + i * p.dilationHeight
                if inputRow < 0 || inputRow >= g.h { continue }
                let sourceRow = source + inputRow * g.w
                for j in 0..<g.kw {
                    let lo = valid[2 * j]
                    let hi = valid[2 * j + 1]
                    if lo >= hi { continue }
                    let weight = kernel[i * g.kw + j]
                    let offset = j * p.dilationWidth - p.padLeft
                    if p.strideWidth == 1 {
                        multiplyAdd(row + lo, sourceRow + lo + offset, weight, count: hi - lo)
                    } else {
                        let stride = p.strideWidth
                        for x in lo..<hi { row[x] += weight * sourceRow[x * stride + offset] }
                    }
                }
            }
        }
    }

    /// `target[i] += weight · source[i]` for `count` elements, eight at a time.
    @inline(__always)
    static func multiplyAdd(
        _ target: UnsafeMutablePointer<Float>, _ source: UnsafePointer<Float>, _ weight: Float, count: Int
    ) {
        let w = SIMD8<Float>(repeating: weight)
        let targetRaw = UnsafeMutableRawPointer(target)
        let sourceRaw = UnsafeRawPointer(source)
        var i = 0
        while i + 8 <= count {
            let offset = i * MemoryLayout<Float>.stride
            let t = targetRaw.loadUnaligned(fromByteOffset: offset, as: SIMD8<Float>.self)
            let s = sourceRaw.loadUnaligned(fromByteOffset: offset, as: SIMD8<Float>.self)
            targetRaw.storeBytes(of: t + w * s, toByteOffset: offset, as: SIMD8<Float>.self)
            i += 8
        }
        while i < count {
            target[i] += weight * source[i]
            i += 1
        }
    }
}
