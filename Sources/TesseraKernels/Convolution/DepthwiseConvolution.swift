import CTesseraSIMD

/// Depthwise convolution (`groups == C`): each output channel `o` reads only input channel
/// `o / multiplier`, so there is no reduction over channels for a GEMM to speed up.
///
/// Each output plane is computed row by row: the row starts at the bias, then each kernel
/// tap adds `w · input row` over the output columns whose input column is inside the image.
/// With stride 1 that inner loop is a contiguous `SIMD8<Float>` multiply-add; the row stays
/// in L1 across the `kH · kW` taps. Planes (`N × O` of them) run in parallel.
enum DepthwiseConvolution {
    static func run(
        _ g: ConvGeometry, input: UnsafePointer<Float>, weights: UnsafePointer<Float>, bias: UnsafePointer<Float>?,
        output: UnsafeMutablePointer<Float>
    ) {
        let multiplier = g.o / g.c
        let positions = g.outputPositions
        let cost = ParallelCost.perItem(nanoseconds: Double(positions * g.kh * g.kw) * 0.3 + 50)
        parallelFor(count: g.n * g.o, cost: cost) { planes in
            for plane in planes {
                let image = plane / g.o
                let channel = plane % g.o
                let source = input + (image * g.c + channel / multiplier) * g.h * g.w
                plane2D(
                    source, kernel: weights + channel * g.kh * g.kw, bias: bias?[channel] ?? 0,
                    output: output + plane * positions, geometry: g)
            }
        }
    }

    /// One output plane from one input plane and one `kH × kW` kernel.
    @inline(__always)
    static func plane2D(
        _ source: UnsafePointer<Float>, kernel: UnsafePointer<Float>, bias: Float, output: UnsafeMutablePointer<Float>,
        geometry g: ConvGeometry
    ) {
        let p = g.parameters
        if SIMDMath.hasAVX2FMA {
            // The same loops in C, which clang vectorises for every stride (Swift leaves the
            // strided taps and short rows scalar).
            withUnsafeTemporaryAllocation(of: Int.self, capacity: 2 * g.kw) { valid in
                for j in 0..<g.kw {
                    let range = ConvGeometry.validRange(
                        lower: 0, upper: g.ow, offset: j * p.dilationWidth - p.padLeft, stride: p.strideWidth,
                        extent: g.w)
                    valid[2 * j] = range.lowerBound
                    valid[2 * j + 1] = range.upperBound
                }
                tessera_depthwise_plane_f32(
                    source, g.h, g.w, kernel, g.kh, g.kw, bias, output, g.oh, g.ow, p.strideHeight, p.strideWidth,
                    p.padTop, p.padLeft, p.dilationHeight, p.dilationWidth, valid.baseAddress!)
            }
            return
        }
        // The output columns each kernel column reaches inside the image do not depend on
        // the row: work them out once per plane, not once per row and tap.
        withUnsafeTemporaryAllocation(of: Range<Int>.self, capacity: g.kw) { validColumns in
            for j in 0..<g.kw {
                validColumns[j] = ConvGeometry.validRange(
                    lower: 0, upper: g.ow, offset: j * p.dilationWidth - p.padLeft, stride: p.strideWidth, extent: g.w)
            }
            for y in 0..<g.oh {
                let row = output + y * g.ow
                row.update(repeating: bias, count: g.ow)
                for i in 0..<g.kh {
                    let inputRow = y * p.strideHeight - p.padTop + i * p.dilationHeight
                    if inputRow < 0 || inputRow >= g.h { continue }
                    let sourceRow = source + inputRow * g.w
                    for j in 0..<g.kw {
                        let valid = validColumns[j]
                        if valid.isEmpty { continue }
                        let weight = kernel[i * g.kw + j]
                        let offset = j * p.dilationWidth - p.padLeft
                        if p.strideWidth == 1 {
                            multiplyAdd(
                                row + valid.lowerBound, sourceRow + valid.lowerBound + offset, weight,
                                count: valid.count)
                        } else {
                            let stride = p.strideWidth
                            for x in valid { row[x] += weight * sourceRow[x * stride + offset] }
                        }
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
