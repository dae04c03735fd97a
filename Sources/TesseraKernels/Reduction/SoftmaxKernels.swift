import Foundation

/// Softmax and log-softmax along one axis of a strided operand.
package enum SoftmaxKernels {
    /// Writes `exp(x - max) / sum(exp(x - max))` along `axis` into `output`.
    ///
    /// Subtracting the maximum keeps large inputs (1e30) from overflowing. A line of all
    /// `-inf`, or one holding NaN or `+inf`, gives NaN, as NumPy does. `float16` computes in
    /// `float32`. The output is contiguous row-major of `layout.shape`, of type `type`.
    ///
    /// ```swift
    /// // x: [1, 3] float32 = [[1, 2, 3]]
    /// SoftmaxKernels.softmax(input: x, layout: StridedLayout(contiguous: [1, 3]), type: .float32,
    ///                        axis: 1, output: out)    // [[0.090, 0.245, 0.665]]
    /// ```
    ///
    /// - Parameters:
    ///   - input: The base pointer `layout` is relative to.
    ///   - layout: Shape, strides (any, including 0 and negative) and offset of the input.
    ///   - type: `.float32`, `.float16` or `.float64`.
    ///   - axis: The axis to normalise, in `-rank..<rank`.
    ///   - output: Room for `layout.count` elements of `type`.
    /// - Precondition: `type` is a floating-point type; `axis` is in range (so rank ≥ 1).
    package static func softmax(
        input: UnsafeRawPointer, layout: StridedLayout, type: KernelScalarType, axis: Int,
        output: UnsafeMutableRawPointer
    ) {
        run(log: false, input: input, layout: layout, type: type, axis: axis, output: output)
    }

    /// Writes `x - max - log(sum(exp(x - max)))` along `axis` into `output`.
    ///
    /// Same layouts, types and rules as ``softmax(input:layout:type:axis:output:)``; more
    /// accurate than taking the log of a softmax, and `-inf` only where the input is `-inf`.
    ///
    /// ```swift
    /// // x: [3] float32 = [1, 2, 3]
    /// SoftmaxKernels.logSoftmax(input: x, layout: StridedLayout(contiguous: [3]), type: .float32,
    ///                           axis: 0, output: out)   // [-2.408, -1.408, -0.408]
    /// ```
    ///
    /// - Precondition: `type` is a floating-point type; `axis` is in `-rank..<rank`.
    package static func logSoftmax(
        input: UnsafeRawPointer, layout: StridedLayout, type: KernelScalarType, axis: Int,
        output: UnsafeMutableRawPointer
    ) {
        run(log: true, input: input, layout: layout, type: type, axis: axis, output: output)
    }

    /// Columns per block when the axis is not innermost.
    static let columnBlock = 64

    private static func run(
        log: Bool, input: UnsafeRawPointer, layout: StridedLayout, type: KernelScalarType, axis: Int,
        output: UnsafeMutableRawPointer
    ) {
        let name = log ? "logSoftmax" : "softmax"
        let shape = layout.shape
        kernelPrecondition(
            axis >= -layout.rank && axis < layout.rank, "[\(name)] axis \(axis) out of range for shape \(shape)")
        kernelPrecondition(type.isFloatingPoint, "[\(name)] needs a floating-point type, got \(type) (shape \(shape))")
        let axis = axis < 0 ? axis + layout.rank : axis
        let lines = LineLayout(layout: layout, axis: axis)
        if layout.count == 0 { return }
        switch type {
        case .float32, .float16:
            runFloat(log: log, input: input, lines: lines, isHalf: type == .float16, output: output)
        default:
            runDouble(
                log: log, input: input.assumingMemoryBound(to: Double.self), lines: lines,
                output: output.assumingMemoryBound(to: Double.self))
        }
    }

    private static func runFloat(
        log: Bool, input: UnsafeRawPointer, lines: LineLayout, isHalf: Bool, output: UnsafeMutableRawPointer
    ) {
        let n = lines.length
        let width = Swift.min(lines.innerCount, lines.innerCount == 1 ? 1 : columnBlock)
        let blocks = (lines.innerCount + width - 1) / width
        let cost = ParallelCost.perItem(nanoseconds: Double(n * width) * ParallelCost.transcendental.nanosecondsPerItem)
        lines.innerPositions.withUnsafeBufferPointer { innerPositions in
            parallelFor(count: lines.outerCount * blocks, cost: cost) { items in
                let scratch = UnsafeMutablePointer<Float>.allocate(capacity: 2 * n * width)
                defer { scratch.deallocate() }
                for item in items {
                    let outer = item / blocks
                    let column = (item % blocks) * width
                    let columns = Swift.min(width, lines.innerCount - column)
                    let base = lines.offset + lines.outerPosition(outer)
                    let outBase = outer * n * lines.innerCount + column
                    if !isHalf && lines.innerCount == 1 && lines.axisStride == 1 {
                        let src = input.assumingMemoryBound(to: Float.self) + base
                        let dst = output.assumingMemoryBound(to: Float.self) + outBase
                        FloatSoftmax.row(src, dst, count: n, log: log)
                        continue
                    }
                    // Gather the [n, columns] block (converting float16) into scratch.
                    for k in 0..<n {
                        let rowBase = base + k * lines.axisStride
                        for j in 0..<columns {
                            let position = rowBase + innerPositions[column + j]
                            scratch[k * columns + j] =
                                isHalf
                                ? input.assumingMemoryBound(to: Float16.self)[position].wide
                                : input.assumingMemoryBound(to: Float.self)[position]
                        }
                    }
                    let result = scratch + n * columns
                    if isHalf {
                        FloatSoftmax.columns(scratch, result, rowStride: columns, count: n, width: columns, log: log)
                        let dst = output.assumingMemoryBound(to: Float16.self) + outBase
                        for k in 0..<n {
                            for j in 0..<columns { dst[k * lines.innerCount + j] = Float16(result[k * columns + j]) }
                        }
                    } else {
                        let dst = output.assumingMemoryBound(to: Float.self) + outBase
                        FloatSoftmax.columns(
                            scratch, dst, rowStride: lines.innerCount, count: n, width: columns, log: log)
                    }
                }
            }
        }
    }

    private static func runDouble(
        log: Bool, input: UnsafePointer<Double>, lines: LineLayout, output: UnsafeMutablePointer<Double>
    ) {
        let n = lines.length
        let cost = ParallelCost.perItem(nanoseconds: Double(n) * ParallelCost.transcendental.nanosecondsPerItem)
        lines.innerPositions.withUnsafeBufferPointer { innerPositions in
            parallelFor(count: lines.outerCount * lines.innerCount, cost: cost) { items in
                for item in items {
                    let outer = item / lines.innerCount
                    let inner = item % lines.innerCount
                    let src = input + lines.offset + lines.outerPosition(outer) + innerPositions[inner]
                    let dst = output + outer * n * lines.innerCount + inner
                    let stride = lines.axisStride
                    let dstStride = lines.innerCount
                    var m = -Double.infinity
                    for k in 0..<n {
                        let x = src[k * stride]
                        if x > m || x.isNaN { m = x }
                        if m.isNaN { break }
                    }
                    var sum = 0.0
                    for k in 0..<n { sum += Foundation.exp(src[k * stride] - m) }
                    if log {
                        // (x - m) - log(sum), not x - (m + log(sum)): the latter loses log(sum) next to a large m.
                        let logSum = Foundation.log(sum)
                        for k in 0..<n { dst[k * dstStride] = (src[k * stride] - m) - logSum }
                    } else {
                        for k in 0..<n { dst[k * dstStride] = Foundation.exp(src[k * stride] - m) / sum }
                    }
                }
            }
        }
    }
}

/// An operand seen as lines along one axis: `outerCount × innerCount` lines of `length`
/// elements, line `(outer, inner)` starting at `offset + outerPosition(outer) +
/// innerPositions[inner]` and stepping `axisStride`. The contiguous output of the same shape
/// puts element `k` of that line at `(outer * length + k) * innerCount + inner`.
struct LineLayout {
    var offset: Int
    var length: Int
    var axisStride: Int
    var outerShape: [Int]
    var outerStrides: [Int]
    var outerCount: Int
    var innerCount: Int
    var innerPositions: [Int]

    init(layout: StridedLayout, axis: Int) {
        offset = layout.offset
        length = layout.shape[axis]
        axisStride = layout.strides[axis]
        outerShape = Array(layout.shape[..<axis])
        outerStrides = Array(layout.strides[..<axis])
        outerCount = outerShape.reduce(1, *)
        let innerShape = Array(layout.shape[(axis + 1)...])
        innerCount = innerShape.reduce(1, *)
        innerPositions = ReductionPlan.positions(shape: innerShape, strides: Array(layout.strides[(axis + 1)...]))
    }

    /// The input position (relative to `offset`) of outer index `linear` (row-major).
    @inline(__always)
    func outerPosition(_ linear: Int) -> Int {
        var rest = linear
        var position = 0
        var d = outerShape.count - 1
        while d >= 0 {
            position += (rest % outerShape[d]) * outerStrides[d]
            rest /= outerShape[d]
            d -= 1
        }
        return position
    }
}

/// The `Float` softmax loops: `SIMD16<Float>` max, exp-and-sum and scale passes.
enum FloatSoftmax {
    /// Softmax (or log-softmax) of the contiguous row `src[0..<count]` into `dst`.
    static func row(_ src: UnsafePointer<Float>, _ dst: UnsafeMutablePointer<Float>, count: Int, log: Bool) {
        let m = FloatReduction.extremum(src, count: count, isMax: true)
        let mv = SIMD16<Float>(repeating: m)
        var i = 0
        // One pass of exp(x - max) into dst (or only summed for log-softmax).
        let sum = SIMDMath.expShifted(src, into: log ? nil : dst, count: count, shift: m)
        if log {
            let logSum = Foundation.log(sum)
            i = 0
            while i + 16 <= count {
                FloatReduction.store((FloatReduction.load(src + i) - mv) - logSum, dst + i)
                i += 16
            }
            while i < count {
                dst[i] = (src[i] - m) - logSum
                i += 1
            }
        } else {
            let scale = 1 / sum
            i = 0
            while i + 16 <= count {
                FloatReduction.store(FloatReduction.load(dst + i) * scale, dst + i)
                i += 16
            }
            while i < count {
                dst[i] *= scale
                i += 1
            }
        }
    }

    /// Column-wise softmax of the contiguous block `src[count × width]` (row `k` at
    /// `src + k * width`) into `dst` (row `k` at `dst + k * rowStride`). `src` is clobbered
    /// for softmax (it holds the exponentials).
    static func columns(
        _ src: UnsafeMutablePointer<Float>, _ dst: UnsafeMutablePointer<Float>, rowStride: Int, count: Int,
        width: Int, log: Bool
    ) {
        withUnsafeTemporaryAllocation(of: Float.self, capacity: 2 * width) { buffer in
            let maxima = buffer.baseAddress!
            let sums = maxima + width
            maxima.initialize(repeating: -.infinity, count: width)
            sums.initialize(repeating: 0, count: width)
            for k in 0..<count {
                FloatReduction.extremumRow(maxima, src + k * width, count: width, isMax: true)
            }
            for k in 0..<count {
                let row = src + k * width
                var j = 0
                while j + 16 <= width {
                    let e = SIMDMath.exp(FloatReduction.load(row + j) - FloatReduction.load(maxima + j))
                    if !log { FloatReduction.store(e, row + j) }
                    FloatReduction.store(FloatReduction.load(sums + j) + e, sums + j)
                    j += 16
                }
                while j < width {
                    let e = SIMDMath.exp(row[j] - maxima[j])
                    if !log { row[j] = e }
                    sums[j] += e
                    j += 1
                }
            }
            if log {
                for j in 0..<width { sums[j] = Foundation.log(sums[j]) }
                for k in 0..<count {
                    for j in 0..<width { dst[k * rowStride + j] = (src[k * width + j] - maxima[j]) - sums[j] }
                }
            } else {
                for j in 0..<width { sums[j] = 1 / sums[j] }
                for k in 0..<count {
                    let row = src + k * width
                    let out = dst + k * rowStride
                    var j = 0
                    while j + 16 <= width {
                        FloatReduction.store(FloatReduction.load(row + j) * FloatReduction.load(sums + j), out + j)
                        j += 16
                    }
                    while j < width {
                        out[j] = row[j] * sums[j]
                        j += 1
                    }
                }
            }
        }
    }
}
