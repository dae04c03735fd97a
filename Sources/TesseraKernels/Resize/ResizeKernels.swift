/// How ``ResizeKernels/resize(input:type:planes:height:width:newHeight:newWidth:method:output:)``
/// picks or blends source pixels.
@usableFromInline package enum ResizeKernelMethod: Sendable, Hashable {
    /// PyTorch's `nearest`: source index `min(floor(dst * in / out), in - 1)`.
    case nearest
    /// Bilinear interpolation, with PyTorch's `align_corners` rule.
    case bilinear(alignCorners: Bool)
}

/// Spatial resizing of the last two axes of contiguous `[planes, height, width]` data.
package enum ResizeKernels {
    /// Resizes every plane to `newHeight × newWidth`.
    ///
    /// Coordinates follow `torch.nn.functional.interpolate`: with `alignCorners` the corner
    /// pixels of input and output line up (`src = dst * (in - 1) / (out - 1)`); without, pixel
    /// centres do (`src = (dst + 0.5) * in / out - 0.5`, clamped at 0).
    ///
    /// ```swift
    /// ResizeKernels.resize(input: x, type: .float32, planes: 3, height: 4, width: 4,
    ///                      newHeight: 8, newWidth: 8, method: .bilinear(alignCorners: false), output: y)
    /// ```
    ///
    /// - Precondition: `type` is `.float32` or `.float64`; the sizes are positive.
    package static func resize(
        input: UnsafeRawPointer, type: KernelScalarType, planes: Int, height: Int, width: Int, newHeight: Int,
        newWidth: Int, method: ResizeKernelMethod, output: UnsafeMutableRawPointer
    ) {
        kernelPrecondition(
            height > 0 && width > 0 && newHeight > 0 && newWidth > 0,
            "[resized] sizes must be positive: \(height)×\(width) to \(newHeight)×\(newWidth)")
        switch type {
        case .float32:
            run(
                input.assumingMemoryBound(to: Float.self), planes, height, width, newHeight, newWidth, method,
                output.assumingMemoryBound(to: Float.self))
        case .float64:
            run(
                input.assumingMemoryBound(to: Double.self), planes, height, width, newHeight, newWidth, method,
                output.assumingMemoryBound(to: Double.self))
        default:
            kernelFailure("[resized] needs float32 or float64 data, got \(type)")
        }
    }

    /// For each output coordinate, the two source indices and the weight of the second.
    static func taps(input: Int, output: Int, method: ResizeKernelMethod) -> [(Int, Int, Float)] {
        (0..<output).map { dst -> (Int, Int, Float) in
            switch method {
            case .nearest:
                let scale = Float(input) / Float(output)
                let src = Swift.min(Int((Float(dst) * scale).rounded(.down)), input - 1)
                return (src, src, 0)
            case .bilinear(let alignCorners):
                let src: Float
                if alignCorners {
                    let scale = output > 1 ? Float(input - 1) / Float(output - 1) : 0
                    src = scale * Float(dst)
                } else {
                    let scale = Float(input) / Float(output)
                    src = Swift.max(scale * (Float(dst) + 0.5) - 0.5, 0)
                }
                let i0 = Swift.min(Int(src), input - 1)
                let i1 = i0 < input - 1 ? i0 + 1 : i0
                return (i0, i1, src - Float(i0))
            }
        }
    }

    private static func run<T: BinaryFloatingPoint>(
        _ input: UnsafePointer<T>, _ planes: Int, _ h: Int, _ w: Int, _ oh: Int, _ ow: Int,
        _ method: ResizeKernelMethod, _ output: UnsafeMutablePointer<T>
    ) {
        let rows = taps(input: h, output: oh, method: method)
        let cols = taps(input: w, output: ow, method: method)
        parallelFor(count: planes * oh, cost: ParallelCost(nanosecondsPerItem: Double(ow) * 2)) { range in
            for item in range {
                let plane = item / oh
                let y = item % oh
                let (y0, y1, ly) = rows[y]
                let top = input + plane * h * w + y0 * w
                let bottom = input + plane * h * w + y1 * w
                let out = output + item * ow
                let wy = T(ly)
                for x in 0..<ow {
                    let (x0, x1, lx) = cols[x]
                    let wx = T(lx)
                    let t = top[x0] + (top[x1] - top[x0]) * wx
                    let b = bottom[x0] + (bottom[x1] - bottom[x0]) * wx
                    out[x] = t + (b - t) * wy
                }
            }
        }
    }
}
