import TesseraGraph
import TesseraKernels

extension MLTensor {
    /// Creates a tensor by stacking tensors along a new axis (same as `init(stacking:alongAxis:)`).
    ///
    /// ```swift
    /// let rows = [MLTensor([1, 2] as [Float]), MLTensor([3, 4] as [Float])]
    /// MLTensor(rows).shape   // [2, 2]
    /// ```
    ///
    /// - Precondition: At least one tensor; all have the same shape and scalar type; `axis`
    ///   is in `-(rank + 1)...rank` for the inputs' rank.
    public init(_ elements: some Collection<MLTensor>, alongAxis axis: Int = 0) {
        self.init(stacking: elements, alongAxis: axis)
    }

    /// Creates a tensor by stacking tensors of equal shape along a new axis.
    ///
    /// N inputs of shape `[A, B, C]` give `[N, A, B, C]` along axis 0 and `[A, N, B, C]`
    /// along axis 1; negative axes count from the end of the result. The result has the
    /// inputs' scalar type.
    ///
    /// ```swift
    /// let a = MLTensor([1, 2] as [Float]), b = MLTensor([3, 4] as [Float])
    /// MLTensor(stacking: [a, b], alongAxis: 1)   // [[1, 3], [2, 4]]
    /// ```
    ///
    /// - Precondition: At least one tensor; all have the same shape and scalar type; `axis`
    ///   is in `-(rank + 1)...rank`.
    public init(stacking tensors: some Collection<MLTensor>, alongAxis axis: Int = 0) {
        let tensors = Array(tensors)
        guard MLTensor.check(!tensors.isEmpty, "[stack] needs at least one tensor") else {
            self = .placeholder()
            return
        }
        let first = tensors[0]
        for tensor in tensors.dropFirst() {
            guard
                MLTensor.check(tensor.shape == first.shape, "[stack] shapes differ: \(first.shape) vs \(tensor.shape)")
            else {
                self = first.placeholder
                return
            }
        }
        guard let axis = first.normalizedAxis(axis, op: "stack", insertion: true) else {
            self = first.placeholder
            return
        }
        var expandedShape = first.shape
        expandedShape.insert(1, at: axis)
        self.init(.concat(axis: axis), tensors.map { MLTensor(.reshape(expandedShape), [$0]) })
    }

    /// Creates a tensor by joining tensors along an existing axis.
    ///
    /// `[2, 3]` and `[2, 3]` give `[4, 3]` along axis 0 and `[2, 6]` along axis 1.
    ///
    /// ```swift
    /// let a = MLTensor(zeros: [2, 3], scalarType: Float.self)
    /// MLTensor(concatenating: [a, a], alongAxis: -1).shape   // [2, 6]
    /// ```
    ///
    /// - Precondition: At least one tensor; all have the same rank (at least 1) and scalar
    ///   type and agree on every dimension but `axis`; `axis` is in `-rank..<rank`.
    public init(concatenating tensors: some Collection<MLTensor>, alongAxis axis: Int = 0) {
        let tensors = Array(tensors)
        guard MLTensor.check(!tensors.isEmpty, "[concatenate] needs at least one tensor") else {
            self = .placeholder()
            return
        }
        guard let axis = tensors[0].normalizedAxis(axis, op: "concatenate") else {
            self = tensors[0].placeholder
            return
        }
        self.init(.concat(axis: axis), tensors)
    }

    /// Splits the tensor into `count` equal parts along an axis.
    ///
    /// Each part is a view (a slice) of this tensor: `[5, 30]` split into 3 along axis 1
    /// gives three `[5, 10]` tensors.
    ///
    /// ```swift
    /// let parts = MLTensor([1, 2, 3, 4] as [Float]).split(count: 2)   // [1, 2], [3, 4]
    /// ```
    ///
    /// - Precondition: `count` is positive and divides `shape[axis]`; `axis` is in `-rank..<rank`.
    public func split(count: Int, alongAxis axis: Int = 0) -> [MLTensor] {
        guard let axis = normalizedAxis(axis, op: "split"),
            MLTensor.check(
                count > 0 && shape[axis] % count == 0,
                "[split] count \(count) does not divide dimension \(axis) of shape \(shape)")
        else { return Array(repeating: placeholder, count: Swift.max(count, 0)) }
        return split(sizes: Array(repeating: shape[axis] / count, count: count), alongAxis: axis)
    }

    /// Splits the tensor into parts of the given sizes along an axis.
    ///
    /// Each part is a view (a slice) of this tensor: `[5, 30]` with sizes `[4, 15, 11]` along
    /// axis 1 gives `[5, 4]`, `[5, 15]` and `[5, 11]`.
    ///
    /// ```swift
    /// let (head, tail) = { ($0[0], $0[1]) }(MLTensor([1, 2, 3] as [Float]).split(sizes: [1, 2]))
    /// ```
    ///
    /// - Precondition: Every size is non-negative and they sum to `shape[axis]`; `axis` is in
    ///   `-rank..<rank`.
    public func split(sizes: [Int], alongAxis axis: Int = 0) -> [MLTensor] {
        guard let axis = normalizedAxis(axis, op: "split"),
            MLTensor.check(
                sizes.allSatisfy { $0 >= 0 } && sizes.reduce(0, &+) == shape[axis],
                "[split] sizes \(sizes) do not add up to dimension \(axis) of shape \(shape)")
        else { return Array(repeating: placeholder, count: sizes.count) }
        var start = 0
        return sizes.map { size in
            defer { start += size }
            return slice(axis: axis, start: start, count: size)
        }
    }

    /// Splits the tensor into its slices along an axis, each without that axis.
    ///
    /// The inverse of `init(stacking:alongAxis:)`: a `[3, 4]` tensor along axis 0 gives three
    /// `[4]` tensors (views).
    ///
    /// ```swift
    /// let rows = MLTensor(zeros: [3, 4], scalarType: Float.self).unstacked()   // 3 × [4]
    /// ```
    ///
    /// - Precondition: The rank is at least 1 and `axis` is in `-rank..<rank`.
    public func unstacked(alongAxis axis: Int = 0) -> [MLTensor] {
        guard let axis = normalizedAxis(axis, op: "unstack") else { return [] }
        var partShape = shape
        partShape.remove(at: axis)
        return (0..<shape[axis]).map { MLTensor(.reshape(partShape), [slice(axis: axis, start: $0, count: 1)]) }
    }

    /// The window `start..<start + count` along `axis` (a view).
    private func slice(axis: Int, start: Int, count: Int) -> MLTensor {
        var starts = Array(repeating: 0, count: rank)
        var counts = shape
        starts[axis] = count > 0 ? start : 0
        counts[axis] = count
        return MLTensor(.slice(starts: starts, steps: Array(repeating: 1, count: rank), counts: counts), [self])
    }
}
