import TesseraGraph

extension MLTensor {
    /// Returns a strided window of the tensor: along axis `i`, `counts[i]` elements from
    /// `starts[i]` in steps of `steps[i]` (negative steps walk backwards). A view; the whole
    /// tensor (starts 0, steps 1, counts the shape) is returned as it is.
    ///
    /// **Tessera package API** for the MIL lowering, which needs slices whose bounds are
    /// computed (the public subscripts take them one axis at a time, written out).
    ///
    /// ```swift
    /// x.sliced(starts: [0, 3], steps: [1, -1], counts: [2, 4])   // columns 3, 2, 1, 0 of rows 0, 1
    /// ```
    ///
    /// - Precondition: One start, step and count per axis; steps not 0; every element the
    ///   window reads lies inside the tensor (`[slice] …` otherwise; inside
    ///   ``withShapeChecks(_:)`` the error is recorded).
    package func sliced(starts: [Int], steps: [Int], counts: [Int]) -> MLTensor {
        if counts == shape && starts.allSatisfy({ $0 == 0 }) && steps.allSatisfy({ $0 == 1 }) { return self }
        return MLTensor(.slice(starts: starts, steps: steps, counts: counts), [self])
    }

    /// Returns elements `start..<start + count` along `axis` (a view).
    ///
    /// **Tessera package API.**
    ///
    /// ```swift
    /// x.narrowed(alongAxis: 1, start: 2, count: 3)   // x[:, 2:5]
    /// ```
    ///
    /// - Precondition: `axis` is in `0..<rank` and the range lies inside the axis.
    package func narrowed(alongAxis axis: Int, start: Int, count: Int) -> MLTensor {
        guard MLTensor.check(axis >= 0 && axis < rank, "[narrowed] axis \(axis) is out of range for shape \(shape)")
        else { return placeholder }
        var starts = [Int](repeating: 0, count: rank)
        var counts = shape
        starts[axis] = start
        counts[axis] = count
        return sliced(starts: starts, steps: [Int](repeating: 1, count: rank), counts: counts)
    }
}
