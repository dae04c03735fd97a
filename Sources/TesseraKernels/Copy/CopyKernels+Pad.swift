/// How ``CopyKernels/pad(from:layout:elementSize:padding:mode:to:)`` fills the border,
/// following NumPy's `numpy.pad` modes.
///
/// For an axis holding `[a, b, c, d]` padded by 2 on each side:
///
/// | mode        | result                       |
/// |-------------|------------------------------|
/// | `constant`  | `[k, k, a, b, c, d, k, k]`   |
/// | `reflect`   | `[c, b, a, b, c, d, c, b]`   |
/// | `symmetric` | `[b, a, a, b, c, d, d, c]`   |
/// | `edge`      | `[a, a, a, b, c, d, d, d]`   |
package enum PadMode: Sendable, Hashable {
    /// Every border element is the same value, given by its bits in the low `elementSize`
    /// bytes (e.g. `UInt64(Float(-1).bitPattern)`; `0` is zero for every type).
    case constant(bitPattern: UInt64)
    /// Mirror about the edge element, excluding it (`numpy` "reflect", PyTorch "reflect").
    case reflect
    /// Mirror about the edge, including the edge element (`numpy` "symmetric").
    case symmetric
    /// Repeat the edge element (`numpy` "edge", PyTorch "replicate").
    case edge
}

extension CopyKernels {
    /// Pads a strided operand on every axis into a contiguous buffer (`numpy.pad`).
    ///
    /// The output has shape `layout.shape[d] + padding[d].before + padding[d].after`; the input
    /// sits at offset `before` on each axis and the border is filled as `mode` says. Padding
    /// is applied axis by axis, so corners of mirrored modes mirror already padded rows, as
    /// NumPy does.
    ///
    /// ```swift
    /// // [2, 3] float32 padded by one zero on every side -> [4, 5]
    /// CopyKernels.pad(from: x, layout: StridedLayout(contiguous: [2, 3]), elementSize: 4,
    ///                 padding: [(1, 1), (1, 1)], mode: .constant(bitPattern: 0), to: out)
    /// ```
    ///
    /// - Parameters:
    ///   - from: The base pointer of the operand.
    ///   - layout: The operand's layout.
    ///   - elementSize: Bytes per element: 1, 2, 4 or 8.
    ///   - padding: Elements to add before and after, one pair per dimension.
    ///   - mode: How border elements are chosen.
    ///   - to: The contiguous destination; must not overlap the input.
    /// - Precondition: `padding.count == layout.rank` and every amount is non-negative. For
    ///   `reflect`, each amount is less than its dimension's size (as PyTorch requires); for
    ///   `symmetric`, at most the size; for `edge`, a padded dimension is not empty.
    package static func pad(
        from: UnsafeRawPointer, layout: StridedLayout, elementSize: Int, padding: [(before: Int, after: Int)],
        mode: PadMode, to: UnsafeMutableRawPointer
    ) {
        checkElementSize(elementSize, op: "pad")
        let rank = layout.rank
        let shape = layout.shape
        do { try checkPadding(shape: shape, padding: padding, mode: mode) } catch { kernelFailure(error.message) }
        let outShape = (0..<rank).map { shape[$0] + padding[$0].before + padding[$0].after }
        if outShape.contains(0) { return }
        let outStrides = StridedLayout.contiguousStrides(for: outShape)
        let es = elementSize

        // The input goes to the interior box.
        var interiorOffset = 0
        for axis in 0..<rank { interiorOffset += padding[axis].before * outStrides[axis] }
        stridedCopy(
            shape: shape, from: from + layout.offset * es, strides: layout.strides, to: to + interiorOffset * es,
            strides: outStrides, elementSize: es)

        // Then the border, innermost axis first. The slab for axis d spans the interior on
        // axes before d and the whole (already padded) output on axes after d; its source is
        // the interior slice of the output itself read backwards (reflect, symmetric), with
        // stride 0 (edge), or a single constant element. These slabs partition the border.
        var constant = UInt64(0)
        if case .constant(let bits) = mode { constant = bits }
        withUnsafeBytes(of: &constant) { constantBytes in
            let constantPointer = constantBytes.baseAddress!
            for axis in stride(from: rank - 1, through: 0, by: -1) {
                let (before, after) = padding[axis]
                let n = shape[axis]
                var slabShape: [Int] = []
                var slabOffset = 0
                for d in 0..<rank {
                    if d < axis {
                        slabShape.append(shape[d])
                        slabOffset += padding[d].before * outStrides[d]
                    } else {
                        slabShape.append(outShape[d])
                    }
                }
                let stride = outStrides[axis]
                for side in 0..<2 {
                    let width = side == 0 ? before : after
                    if width == 0 { continue }
                    let first = side == 0 ? 0 : before + n
                    // Output position along `axis` the slab's first element is read from, and
                    // the step per slab element.
                    let sourceStart: Int
                    let sourceStep: Int
                    switch mode {
                    case .constant:
                        sourceStart = 0
                        sourceStep = 0
                    case .reflect:
                        sourceStart = side == 0 ? 2 * before : before + n - 2
                        sourceStep = -1
                    case .symmetric:
                        sourceStart = side == 0 ? 2 * before - 1 : before + n - 1
                        sourceStep = -1
                    case .edge:
                        sourceStart = side == 0 ? before : before + n - 1
                        sourceStep = 0
                    }
                    var boxShape = slabShape
                    boxShape[axis] = width
                    let dstPointer = to + (slabOffset + first * stride) * es
                    if case .constant = mode {
                        stridedCopy(
                            shape: boxShape, from: constantPointer, strides: [Int](repeating: 0, count: rank),
                            to: dstPointer, strides: outStrides, elementSize: es)
                    } else {
                        var srcStrides = outStrides
                        srcStrides[axis] = sourceStep * stride
                        let srcPointer = UnsafeRawPointer(to + (slabOffset + sourceStart * stride) * es)
                        stridedCopy(
                            shape: boxShape, from: srcPointer, strides: srcStrides, to: dstPointer,
                            strides: outStrides, elementSize: es)
                    }
                }
            }
        }
    }

    /// Throws the ``OpError`` ``pad(from:layout:elementSize:padding:mode:to:)`` would trap
    /// with when `padding` and `mode` do not fit `shape`; the shape rule of a graph pad.
    package static func checkPadding(shape: [Int], padding: [(before: Int, after: Int)], mode: PadMode) throws(OpError)
    {
        try OpError.require(
            padding.count == shape.count,
            "[pad] \(padding.count) padding pairs for shape \(shape) of rank \(shape.count)")
        for (axis, p) in padding.enumerated() {
            try OpError.require(
                p.before >= 0 && p.after >= 0,
                "[pad] negative padding (\(p.before), \(p.after)) on axis \(axis) of shape \(shape)")
            let n = shape[axis]
            let widest = Swift.max(p.before, p.after)
            switch mode {
            case .constant: break
            case .reflect:
                try OpError.require(
                    widest == 0 || widest < n,
                    "[pad] reflect padding (\(p.before), \(p.after)) must be less than the size \(n) of axis \(axis) "
                        + "of shape \(shape)")
            case .symmetric:
                try OpError.require(
                    widest <= n,
                    "[pad] symmetric padding (\(p.before), \(p.after)) must be at most the size \(n) of axis "
                        + "\(axis) of shape \(shape)")
            case .edge:
                try OpError.require(
                    widest == 0 || n > 0,
                    "[pad] edge padding (\(p.before), \(p.after)) of empty axis \(axis) of shape \(shape)")
            }
        }
    }
}
