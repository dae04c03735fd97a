import TesseraGraph
import TesseraKernels

extension MLTensor {
    /// Returns a slice of the tensor, one entry per dimension (read-only).
    ///
    /// Each entry is an index (`Int`: picks one element and drops the dimension; negative
    /// values count from the end), a range of `Int` (negative bounds count from the end),
    /// `nil` (the whole dimension), or a static member of ``MLTensorRangeExpression``:
    /// `.newAxis`, `.squeezeAxis`, `.fillAll` (every dimension not named, as `...`),
    /// `.index(_:)` and the strided ranges. Dimensions after the last entry are kept whole.
    /// Slices are views: nothing is copied until a consumer needs contiguous data.
    ///
    /// ```swift
    /// let x = MLTensor(shape: [2, 3], scalars: [1, 2, 3, 4, 5, 6], scalarType: Float.self)
    /// x[1]                                   // [4, 5, 6]
    /// x[nil, -1]                             // [3, 6]
    /// x[0, .range(0..<3, stride: 2)]         // [1, 3]
    /// x[.newAxis, 1..., 1...].shape          // [1, 1, 2]
    /// ```
    ///
    /// - Precondition: At most one `.fillAll`; no more entries than dimensions (besides
    ///   `.newAxis`); indices and range bounds inside their dimension; strides non-zero;
    ///   `.squeezeAxis` only on a size-1 dimension.
    public subscript(ranges: (any MLTensorRangeExpression)?...) -> MLTensor {
        sliced(ranges.map { _MLTensorRange.Kind.of($0) })
    }

    /// Returns a slice whose first entry is the `...` literal (every dimension not named).
    ///
    /// ```swift
    /// MLTensor(zeros: [1, 3, 28, 28], scalarType: Float.self)[..., 0].shape   // [1, 3, 28]
    /// ```
    public subscript(
        firstRange: UnboundedRange, trailingRanges: (any MLTensorRangeExpression)?...
    ) -> MLTensor {
        sliced([.fillAll] + trailingRanges.map { _MLTensorRange.Kind.of($0) })
    }

    /// Returns a slice whose second entry is the `...` literal.
    ///
    /// ```swift
    /// MLTensor(zeros: [2, 3, 4], scalarType: Float.self)[0, ..., 1].shape   // [3]
    /// ```
    public subscript(
        firstRange: (any MLTensorRangeExpression)?, secondRange: UnboundedRange,
        trailingRanges: (any MLTensorRangeExpression)?...
    ) -> MLTensor {
        sliced([.of(firstRange), .fillAll] + trailingRanges.map { _MLTensorRange.Kind.of($0) })
    }

    /// Returns a slice whose third entry is the `...` literal.
    ///
    /// ```swift
    /// MLTensor(zeros: [2, 3, 4, 5], scalarType: Float.self)[0, 1, ..., 2].shape   // [4]
    /// ```
    public subscript(
        firstRange: (any MLTensorRangeExpression)?, secondRange: (any MLTensorRangeExpression)?,
        thirdRange: UnboundedRange, trailingRanges: (any MLTensorRangeExpression)?...
    ) -> MLTensor {
        sliced([.of(firstRange), .of(secondRange), .fillAll] + trailingRanges.map { _MLTensorRange.Kind.of($0) })
    }

    /// Returns a slice whose fourth entry is the `...` literal.
    ///
    /// ```swift
    /// MLTensor(zeros: [2, 3, 4, 5, 6], scalarType: Float.self)[0, 1, 2, ..., 3].shape   // [5]
    /// ```
    public subscript(
        firstRange: (any MLTensorRangeExpression)?, secondRange: (any MLTensorRangeExpression)?,
        thirdRange: (any MLTensorRangeExpression)?, fourthRange: UnboundedRange,
        trailingRanges: (any MLTensorRangeExpression)?...
    ) -> MLTensor {
        sliced(
            [.of(firstRange), .of(secondRange), .of(thirdRange), .fillAll]
                + trailingRanges.map { _MLTensorRange.Kind.of($0) })
    }

    /// The slice the entries describe: one strided view, then a reshape for dropped and
    /// inserted dimensions.
    private func sliced(_ entries: [_MLTensorRange.Kind]) -> MLTensor {
        let fills = entries.filter { $0 == .fillAll }.count
        guard MLTensor.check(fills <= 1, "[subscript] more than one `...`/.fillAll for shape \(shape)") else {
            return placeholder
        }
        let consumed = entries.filter { $0 != .fillAll && $0 != .newAxis }.count
        guard
            MLTensor.check(
                consumed <= rank, "[subscript] \(consumed) indexed dimensions for a tensor of shape \(shape)")
        else { return placeholder }
        let whole = _MLTensorRange.Kind.strided(lower: nil, upper: nil, closed: false, stride: 1)
        var expanded: [_MLTensorRange.Kind] = []
        for entry in entries {
            if entry == .fillAll {
                expanded += Array(repeating: whole, count: rank - consumed)
            } else {
                expanded.append(entry)
            }
        }
        if fills == 0 { expanded += Array(repeating: whole, count: rank - consumed) }

        var starts = [Int](repeating: 0, count: rank)
        var steps = [Int](repeating: 1, count: rank)
        var counts = shape
        var resultShape: [Int] = []
        var axis = 0
        for entry in expanded {
            switch entry {
            case .newAxis:
                resultShape.append(1)
                continue
            case .fillAll:
                continue
            case .squeezeAxis:
                guard
                    MLTensor.check(
                        shape[axis] == 1,
                        "[subscript] .squeezeAxis on axis \(axis) of size \(shape[axis]) (shape \(shape))")
                else { return placeholder }
                counts[axis] = 1
            case .index(let i):
                let size = shape[axis]
                guard
                    MLTensor.check(
                        i >= -size && i < size,
                        "[subscript] index \(i) is out of range for axis \(axis) of shape \(shape)")
                else { return placeholder }
                starts[axis] = i < 0 ? i + size : i
                counts[axis] = 1
            case .strided(let lower, let upper, let closed, let stride):
                let size = shape[axis]
                guard MLTensor.check(stride != 0, "[subscript] stride 0 on axis \(axis) of shape \(shape)") else {
                    return placeholder
                }
                func bound(_ value: Int?, default: Int) -> Int? {
                    guard let value else { return `default` }
                    let v = value < 0 ? value + size : value
                    guard
                        MLTensor.check(
                            v >= 0 && v <= size,
                            "[subscript] range bound \(value) is out of range for axis \(axis) of shape \(shape)")
                    else { return nil }
                    return v
                }
                guard let low = bound(lower, default: 0), var high = bound(upper, default: size) else {
                    return placeholder
                }
                if closed && upper != nil {
                    guard
                        MLTensor.check(
                            high < size,
                            "[subscript] closed range bound \(upper!) is out of range for axis \(axis) of shape \(shape)"
                        )
                    else { return placeholder }
                    high += 1
                }
                let n = Swift.max(0, high - low)
                let step = Swift.abs(stride)
                let count = (n + step - 1) / step
                counts[axis] = count
                steps[axis] = stride
                starts[axis] = count == 0 ? 0 : (stride > 0 ? low : high - 1)
                resultShape.append(count)
            }
            axis += 1
        }
        if starts.allSatisfy({ $0 == 0 }) && steps.allSatisfy({ $0 == 1 }) && counts == shape {
            return resultShape == shape ? self : reshaped(to: resultShape)
        }
        let view = MLTensor(.slice(starts: starts, steps: steps, counts: counts), [self])
        return resultShape == counts ? view : view.reshaped(to: resultShape)
    }
}
