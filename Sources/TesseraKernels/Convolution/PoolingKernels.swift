import CTesseraSIMD

/// Max, average and global-average pooling over contiguous NCHW Float32 tensors, with
/// PyTorch's semantics. Every kernel runs in parallel over the `N × C` planes.
///
/// ```swift
/// let p = Pool2DParameters(kernel: (3, 3), strides: (2, 2), padding: (top: 1, bottom: 1, left: 1, right: 1))
/// PoolingKernels.maxPool2d(input: x, inputShape: [1, 64, 112, 112], output: y, parameters: p)
/// ```
package enum PoolingKernels {
    /// The largest value in each window; padding never wins.
    ///
    /// A NaN in a window makes that output NaN (as in PyTorch). A window that lies entirely in
    /// the padding (possible only with padding larger than half the kernel, which PyTorch
    /// rejects) gives `-infinity`. Each output folds its window in `(i, j)` order, a value
    /// replacing the running one when greater or NaN; with AVX-512, column strides of 1 or 2,
    /// no column dilation and windows up to 16 wide, `tessera_maxpool_plane_f32` does the same
    /// for 16 output columns per vector (ResNet-50's 3×3 stride-2 pool), else the loop below.
    ///
    /// ```swift
    /// // 2×2 windows, stride 2: [1, 1, 4, 4] → [1, 1, 2, 2]
    /// PoolingKernels.maxPool2d(input: x, inputShape: [1, 1, 4, 4], output: y,
    ///                          parameters: Pool2DParameters(kernel: (2, 2)))
    /// ```
    ///
    /// - Parameters:
    ///   - input: Contiguous `[N, C, H, W]` input.
    ///   - inputShape: `[N, C, H, W]`.
    ///   - output: Contiguous destination of ``Pool2DParameters/outputShape(inputShape:)``.
    ///   - parameters: Window, strides, padding, dilations and rounding.
    /// - Precondition: The parameters are valid for the input (see
    ///   ``Pool2DParameters/outputShape(inputShape:)``).
    package static func maxPool2d(
        input: UnsafePointer<Float>, inputShape: [Int], output: UnsafeMutablePointer<Float>,
        parameters p: Pool2DParameters
    ) {
        let shape = p.outputShape(inputShape: inputShape)
        let (h, w, oh, ow) = (inputShape[2], inputShape[3], shape[2], shape[3])
        let planes = shape[0] * shape[1]
        let cost = ParallelCost.perItem(nanoseconds: Double(oh * ow * p.kernelHeight * p.kernelWidth) * 0.4 + 50)
        // Per window column, the output columns whose input column is inside the image.
        let valid: [Int] = (0..<p.kernelWidth).flatMap { j in
            let range = ConvGeometry.validRange(
                lower: 0, upper: ow, offset: j * p.dilationWidth - p.padLeft, stride: p.strideWidth, extent: w)
            return [range.lowerBound, range.upperBound]
        }
        let geometry = tessera_depthwise_geometry(
            h: h, w: w, kh: p.kernelHeight, kw: p.kernelWidth, oh: oh, ow: ow, sh: p.strideHeight, sw: p.strideWidth,
            pt: p.padTop, pl: p.padLeft, dh: p.dilationHeight, dw: p.dilationWidth)
        parallelFor(count: planes, cost: cost) { range in
            for plane in range {
                let source = input + plane * h * w
                let target = output + plane * oh * ow
                let vectorised = valid.withUnsafeBufferPointer { valid in
                    withUnsafePointer(to: geometry) { geometry in
                        tessera_maxpool_plane_f32(source, target, geometry, valid.baseAddress!)
                    }
                }
                if vectorised != 0 { continue }
                for y in 0..<oh {
                    let rows = ConvGeometry.validRange(
                        lower: 0, upper: p.kernelHeight, offset: y * p.strideHeight - p.padTop,
                        stride: p.dilationHeight, extent: h)
                    for x in 0..<ow {
                        let columnOffset = x * p.strideWidth - p.padLeft
                        let columns = ConvGeometry.validRange(
                            lower: 0, upper: p.kernelWidth, offset: columnOffset, stride: p.dilationWidth, extent: w)
                        var best = -Float.infinity
                        for i in rows {
                            let row = source + (y * p.strideHeight - p.padTop + i * p.dilationHeight) * w + columnOffset
                            for j in columns {
                                let value = row[j * p.dilationWidth]
                                if value > best || value.isNaN { best = value }
                            }
                        }
                        target[y * ow + x] = best
                    }
                }
            }
        }
    }

    /// The mean of each window.
    ///
    /// With `countIncludePad` the divisor counts padding positions inside the padded input
    /// (a ceil-mode window hanging past the trailing padding is cut there), as PyTorch's
    /// `count_include_pad=True`; without it the divisor is the number of real input
    /// positions in the window (ONNX's default). A window with no real positions gives 0
    /// when padding is excluded.
    ///
    /// ```swift
    /// let p = Pool2DParameters(kernel: (3, 3), strides: (1, 1), padding: (top: 1, bottom: 1, left: 1, right: 1))
    /// PoolingKernels.averagePool2d(input: x, inputShape: [1, 8, 5, 5], output: y,
    ///                              parameters: p, countIncludePad: false)
    /// ```
    ///
    /// - Parameters:
    ///   - input: Contiguous `[N, C, H, W]` input.
    ///   - inputShape: `[N, C, H, W]`.
    ///   - output: Contiguous destination of ``Pool2DParameters/outputShape(inputShape:)``.
    ///   - parameters: Window, strides, padding and rounding; dilations must be 1.
    ///   - countIncludePad: Whether padding positions count in the divisor.
    /// - Precondition: The parameters are valid for the input and have no dilation.
    package static func averagePool2d(
        input: UnsafePointer<Float>, inputShape: [Int], output: UnsafeMutablePointer<Float>,
        parameters p: Pool2DParameters, countIncludePad: Bool
    ) {
        kernelPrecondition(
            p.dilationHeight == 1 && p.dilationWidth == 1, "[averagePool2d] dilation is not supported: \(p)")
        let shape = p.outputShape(inputShape: inputShape)
        let (h, w, oh, ow) = (inputShape[2], inputShape[3], shape[2], shape[3])
        let planes = shape[0] * shape[1]
        let cost = ParallelCost.perItem(nanoseconds: Double(oh * ow * p.kernelHeight * p.kernelWidth) * 0.4 + 50)
        parallelFor(count: planes, cost: cost) { range in
            for plane in range {
                let source = input + plane * h * w
                let target = output + plane * oh * ow
                for y in 0..<oh {
                    let top = y * p.strideHeight - p.padTop
                    let paddedBottom = Swift.min(top + p.kernelHeight, h + p.padBottom)
                    let y0 = Swift.max(top, 0)
                    let y1 = Swift.min(paddedBottom, h)
                    for x in 0..<ow {
                        let left = x * p.strideWidth - p.padLeft
                        let paddedRight = Swift.min(left + p.kernelWidth, w + p.padRight)
                        let x0 = Swift.max(left, 0)
                        let x1 = Swift.min(paddedRight, w)
                        var sum: Float = 0
                        if y0 < y1 && x0 < x1 {
                            for row in y0..<y1 {
                                let line = source + row * w
                                for column in x0..<x1 { sum += line[column] }
                            }
                        }
                        let divisor =
                            countIncludePad
                            ? (paddedBottom - top) * (paddedRight - left)
                            : Swift.max(y1 - y0, 0) * Swift.max(x1 - x0, 0)
                        target[y * ow + x] = divisor > 0 ? sum / Float(divisor) : 0
                    }
                }
            }
        }
    }

    /// The mean of each `H × W` plane: `[N, C, H, W] → [N, C, 1, 1]`.
    ///
    /// An empty plane (`H · W == 0`) gives NaN, as in PyTorch.
    ///
    /// ```swift
    /// PoolingKernels.globalAveragePool2d(input: x, inputShape: [1, 2048, 7, 7], output: y)   // y: 2048 values
    /// ```
    ///
    /// - Parameters:
    ///   - input: Contiguous `[N, C, H, W]` input.
    ///   - inputShape: `[N, C, H, W]`.
    ///   - output: Contiguous destination for `N · C` means.
    /// - Precondition: `inputShape` has rank 4 with no negative size.
    package static func globalAveragePool2d(
        input: UnsafePointer<Float>, inputShape: [Int], output: UnsafeMutablePointer<Float>
    ) {
        kernelPrecondition(
            inputShape.count == 4 && inputShape.allSatisfy { $0 >= 0 },
            "[globalAveragePool2d] input \(inputShape) must be a rank-4 NCHW shape")
        let planes = inputShape[0] * inputShape[1]
        let size = inputShape[2] * inputShape[3]
        parallelFor(count: planes, cost: .perItem(nanoseconds: Double(size) * 0.15 + 20)) { range in
            for plane in range {
                output[plane] = sum(input + plane * size, count: size) / Float(size)
            }
        }
    }

    /// The sum of `count` floats with four `SIMD8` accumulators.
    @inline(__always)
    static func sum(_ source: UnsafePointer<Float>, count: Int) -> Float {
        let raw = UnsafeRawPointer(source)
        let stride = MemoryLayout<Float>.stride
        var a = SIMD8<Float>()
        var b = SIMD8<Float>()
        var c = SIMD8<Float>()
        var d = SIMD8<Float>()
        var i = 0
        while i + 32 <= count {
            a += raw.loadUnaligned(fromByteOffset: i * stride, as: SIMD8<Float>.self)
            b += raw.loadUnaligned(fromByteOffset: (i + 8) * stride, as: SIMD8<Float>.self)
            c += raw.loadUnaligned(fromByteOffset: (i + 16) * stride, as: SIMD8<Float>.self)
            d += raw.loadUnaligned(fromByteOffset: (i + 24) * stride, as: SIMD8<Float>.self)
            i += 32
        }
        while i + 8 <= count {
            a += raw.loadUnaligned(fromByteOffset: i * stride, as: SIMD8<Float>.self)
            i += 8
        }
        var total = ((a + b) + (c + d)).sum()
        while i < count {
            total += source[i]
            i += 1
        }
        return total
    }
}
