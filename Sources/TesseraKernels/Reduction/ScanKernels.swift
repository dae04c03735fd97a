/// Cumulative sums and products along one axis of a strided operand.
package enum ScanKernels {
    /// Writes the running sum along `axis` into `output`.
    ///
    /// Element `k` of a line is `x[0] + … + x[k]`; with `exclusive` it is `x[0] + … + x[k-1]`
    /// (0 first); with `reverse` the running sum starts at the end of the line. Integer types
    /// wrap in their width; `float16` accumulates in `float32`. The output is contiguous
    /// row-major of `layout.shape`, of type `type`.
    ///
    /// ```swift
    /// // x: [4] int32 = [1, 2, 3, 4]
    /// ScanKernels.cumulativeSum(input: x, layout: StridedLayout(contiguous: [4]), type: .int32,
    ///                           axis: 0, output: out)                        // [1, 3, 6, 10]
    /// ScanKernels.cumulativeSum(input: x, layout: StridedLayout(contiguous: [4]), type: .int32,
    ///                           axis: 0, exclusive: true, reverse: true, output: out)   // [9, 7, 4, 0]
    /// ```
    ///
    /// - Parameters:
    ///   - input: The base pointer `layout` is relative to.
    ///   - layout: Shape, strides (any, including 0 and negative) and offset of the input.
    ///   - type: Any numeric type (not `.bool`).
    ///   - axis: The axis to scan, in `-rank..<rank`.
    ///   - exclusive: Whether each element excludes itself.
    ///   - reverse: Whether to scan from the end of the axis.
    ///   - output: Room for `layout.count` elements of `type`.
    /// - Precondition: `type` is not `.bool`; `axis` is in range (so rank ≥ 1).
    package static func cumulativeSum(
        input: UnsafeRawPointer, layout: StridedLayout, type: KernelScalarType, axis: Int,
        exclusive: Bool = false, reverse: Bool = false, output: UnsafeMutableRawPointer
    ) {
        scan(
            "cumulativeSum", product: false, input: input, layout: layout, type: type, axis: axis,
            exclusive: exclusive, reverse: reverse, output: output)
    }

    /// Writes the running product along `axis` into `output`.
    ///
    /// Same layouts, types and options as
    /// ``cumulativeSum(input:layout:type:axis:exclusive:reverse:output:)``; an exclusive scan
    /// starts at 1.
    ///
    /// ```swift
    /// // x: [4] float32 = [1, 2, 3, 4]
    /// ScanKernels.cumulativeProduct(input: x, layout: StridedLayout(contiguous: [4]), type: .float32,
    ///                               axis: 0, output: out)                    // [1, 2, 6, 24]
    /// ```
    ///
    /// - Precondition: `type` is not `.bool`; `axis` is in `-rank..<rank`.
    package static func cumulativeProduct(
        input: UnsafeRawPointer, layout: StridedLayout, type: KernelScalarType, axis: Int,
        exclusive: Bool = false, reverse: Bool = false, output: UnsafeMutableRawPointer
    ) {
        scan(
            "cumulativeProduct", product: true, input: input, layout: layout, type: type, axis: axis,
            exclusive: exclusive, reverse: reverse, output: output)
    }

    private static func scan(
        _ name: String, product: Bool, input: UnsafeRawPointer, layout: StridedLayout, type: KernelScalarType,
        axis: Int, exclusive: Bool, reverse: Bool, output: UnsafeMutableRawPointer
    ) {
        let shape = layout.shape
        kernelPrecondition(
            axis >= -layout.rank && axis < layout.rank, "[\(name)] axis \(axis) out of range for shape \(shape)")
        kernelPrecondition(type != .bool, "[\(name)] is not defined for bool (shape \(shape)); cast first")
        if layout.count == 0 { return }
        let lines = LineLayout(layout: layout, axis: axis < 0 ? axis + layout.rank : axis)
        let options = ScanOptions(product: product, exclusive: exclusive, reverse: reverse)
        switch type {
        case .float32: run(Float.self, input, lines, options, output)
        case .float16: run(Float16.self, input, lines, options, output)
        case .float64: run(Double.self, input, lines, options, output)
        case .int32: run(Int32.self, input, lines, options, output)
        case .int16: run(Int16.self, input, lines, options, output)
        case .int8: run(Int8.self, input, lines, options, output)
        case .uint32: run(UInt32.self, input, lines, options, output)
        case .uint16: run(UInt16.self, input, lines, options, output)
        case .uint8: run(UInt8.self, input, lines, options, output)
        case .bool: kernelFailure("[\(name)] is not defined for bool")
        }
    }

    struct ScanOptions {
        var product: Bool
        var exclusive: Bool
        var reverse: Bool
    }

    /// Columns per block: the running values stay in L1 while the axis is walked.
    static let columnBlock = 256

    /// Walks each `[length, columns]` block of lines row by row, so a scan along a non-last
    /// axis reads and writes whole rows instead of striding down columns.
    private static func run<T: ReductionScalar>(
        _: T.Type, _ input: UnsafeRawPointer, _ lines: LineLayout, _ options: ScanOptions,
        _ output: UnsafeMutableRawPointer
    ) {
        let src = input.assumingMemoryBound(to: T.self) + lines.offset
        let dst = output.assumingMemoryBound(to: T.self)
        let n = lines.length
        let width = Swift.min(lines.innerCount, columnBlock)
        let blocks = (lines.innerCount + width - 1) / width
        let cost = ParallelCost.perItem(nanoseconds: Double(n * width) * ParallelCost.elementwise.nanosecondsPerItem)
        let start: T.Wide = options.product ? .one : .zero
        lines.innerPositions.withUnsafeBufferPointer { innerPositions in
            parallelFor(count: lines.outerCount * blocks, cost: cost) { items in
                let running = UnsafeMutablePointer<T.Wide>.allocate(capacity: width)
                defer { running.deallocate() }
                for item in items {
                    let outer = item / blocks
                    let column = (item % blocks) * width
                    let columns = Swift.min(width, lines.innerCount - column)
                    let base = src + lines.outerPosition(outer)
                    let outBase = dst + outer * n * lines.innerCount + column
                    running.initialize(repeating: start, count: columns)
                    for step in 0..<n {
                        let k = options.reverse ? n - 1 - step : step
                        let row = base + k * lines.axisStride
                        let out = outBase + k * lines.innerCount
                        for j in 0..<columns {
                            let x = row[innerPositions[column + j]].wide
                            let previous = running[j]
                            let next = options.product ? T.Wide.multiply(previous, x) : T.Wide.add(previous, x)
                            out[j] = T(narrowing: options.exclusive ? previous : next)
                            running[j] = next
                        }
                    }
                }
            }
        }
    }
}
