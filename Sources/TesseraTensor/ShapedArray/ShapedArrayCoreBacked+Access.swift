import TesseraKernels

// MARK: - Shape and scalars

extension _MLShapedArrayCoreBacked {
    /// The size of each dimension; `[]` for a rank-0 array.
    public var shape: [Int] { _core.shape }

    /// The distance in elements between neighbours along each dimension.
    ///
    /// Row-major (`[3, 1]` for shape `[2, 3]`) for arrays Tessera creates; views such as
    /// ``MLShapedArray/transposed()`` and slices keep their base's strides.
    public var strides: [Int] { _core.strides }

    /// Whether the array has rank 0 (shape `[]`, one scalar).
    public var isScalar: Bool { _core.rank == 0 }

    /// The total number of elements: the product of ``shape`` (1 for rank 0).
    public var scalarCount: Int { _core.scalarCount }

    /// The number of slices along the first axis: `shape[0]`, or 0 for a rank-0 array.
    public var count: Int { _core.shape.first ?? 0 }

    /// The only element of a rank-0 array, or `nil` when the array has any other rank.
    ///
    /// ```swift
    /// var s = MLShapedArray<Float>(scalar: 1)
    /// s.scalar = 2
    /// ```
    ///
    /// - Precondition: Setting requires a rank-0 array and a non-`nil` value.
    public var scalar: Scalar? {
        get { isScalar ? _core.base[_core.layout.offset] : nil }
        set {
            let op = "\(Self._typeName).scalar"
            kernelPrecondition(isScalar, "[\(op)] cannot set the scalar of an array of shape \(shape)")
            guard let newValue else { kernelFailure("[\(op)] cannot set the scalar to nil") }
            _core.makeUnique()
            _core.base[_core.layout.offset] = newValue
        }
    }

    /// Every element in row-major order, whatever the strides.
    ///
    /// ```swift
    /// let m = MLShapedArray<Float>(scalars: [1, 2, 3, 4, 5, 6], shape: [2, 3])
    /// m.transposed().scalars      // [1, 4, 2, 5, 3, 6]
    /// ```
    ///
    /// - Precondition: Setting requires exactly ``scalarCount`` values.
    public var scalars: [Scalar] {
        get { _core.scalars }
        set {
            kernelPrecondition(
                newValue.count == scalarCount,
                "[\(Self._typeName).scalars] cannot assign \(newValue.count) scalars to shape \(shape)")
            _core.makeUnique()
            newValue.withUnsafeBufferPointer { buffer in
                if let source = buffer.baseAddress { _core.writeScalars(from: source) }
            }
        }
    }

    /// Calls `body` with the elements' memory, ``shape`` and ``strides``.
    ///
    /// The buffer starts at element `[0, 0, …]` and ends at the farthest element, so element
    /// `[i, j]` is `buffer[i * strides[0] + j * strides[1]]`. It is valid only inside `body`.
    ///
    /// ```swift
    /// let sum = m.withUnsafeShapedBufferPointer { buffer, shape, strides in buffer.reduce(0, +) }
    /// ```
    public func withUnsafeShapedBufferPointer<R>(
        _ body: (UnsafeBufferPointer<Scalar>, [Int], [Int]) throws -> R
    ) rethrows -> R {
        try withExtendedLifetime(_core.storage) {
            let buffer = UnsafeBufferPointer(start: _core.base + _core.layout.offset, count: _core.span)
            return try body(buffer, shape, strides)
        }
    }

    /// Calls `body` with the elements' mutable memory, ``shape`` and ``strides``.
    ///
    /// Copies the elements first if other arrays share them (copy-on-write). The layout rules
    /// are those of ``withUnsafeShapedBufferPointer(_:)``.
    ///
    /// ```swift
    /// m.withUnsafeMutableShapedBufferPointer { buffer, _, _ in buffer[0] = 42 }
    /// ```
    ///
    /// - Precondition: `body` leaves the buffer pointer as it found it.
    public mutating func withUnsafeMutableShapedBufferPointer<R>(
        _ body: (inout UnsafeMutableBufferPointer<Scalar>, [Int], [Int]) throws -> R
    ) rethrows -> R {
        _core.makeUnique()
        let core = _core
        let original = UnsafeMutableBufferPointer(start: core.base + core.layout.offset, count: core.span)
        var buffer = original
        let result = try withExtendedLifetime(core.storage) { try body(&buffer, core.shape, core.strides) }
        kernelPrecondition(
            buffer.baseAddress == original.baseAddress && buffer.count == original.count,
            "[\(Self._typeName).withUnsafeMutableShapedBufferPointer] the closure replaced the buffer it was given")
        return result
    }

    /// Sets every element to `value`.
    ///
    /// ```swift
    /// var m = MLShapedArray<Float>(repeating: 0, shape: [2, 2])
    /// m.fill(with: 1)
    /// ```
    public mutating func fill(with value: Scalar) {
        _core.makeUnique()
        let base = _core.base
        _core.forEachRow { _, offset, length, stride in
            for i in 0..<length { base[offset + i * stride] = value }
        }
    }
}

// MARK: - Subscripts

extension _MLShapedArrayCoreBacked {
    /// The element at `indices`, one index per axis (empty for rank 0).
    ///
    /// ```swift
    /// m[scalarAt: [1, 2]] = 7
    /// ```
    ///
    /// - Precondition: There is one index per axis and each is in `0..<shape[axis]`.
    public subscript<C: Collection>(scalarAt indices: C) -> Scalar where C.Element == Int {
        get { _core.base[_core.offset(of: indices, op: "\(Self._typeName)[scalarAt:]")] }
        set {
            _ = _core.offset(of: indices, op: "\(Self._typeName)[scalarAt:]")
            _core.makeUnique()
            _core.base[_core.offset(of: indices, op: "\(Self._typeName)[scalarAt:]")] = newValue
        }
    }

    /// The element at the given indices, one per axis.
    ///
    /// ```swift
    /// m[scalarAt: 1, 2] = 7
    /// ```
    ///
    /// - Precondition: There is one index per axis and each is in `0..<shape[axis]`.
    public subscript(scalarAt indices: Int...) -> Scalar {
        get { self[scalarAt: indices] }
        set { self[scalarAt: indices] = newValue }
    }

    /// The slice at `index` along the first axis (rank one less than the array's).
    ///
    /// The slice shares the array's memory until either is mutated. Setting copies the new
    /// value's elements into that position.
    ///
    /// ```swift
    /// let row = m[1]          // shape [3]
    /// m[0] = row              // copy row 1 over row 0
    /// ```
    ///
    /// - Precondition: The array has rank at least 1 and `index` is in `0..<count`; a new
    ///   value has the slice's shape.
    public subscript(index: Int) -> MLShapedArraySlice<Scalar> {
        get { MLShapedArraySlice(_core: _core.fixingLeading(CollectionOfOne(index), op: "\(Self._typeName)[_:]")) }
        set {
            _core.assign(
                newValue._core, toRegion: { $0.fixingLeading(CollectionOfOne(index), op: "\(Self._typeName)[_:]") },
                op: "\(Self._typeName)[_:]")
        }
    }

    /// The slice with the leading `indices.count` axes fixed at `indices`; its rank is
    /// `shape.count - indices.count`.
    ///
    /// ```swift
    /// let m = MLShapedArray<Float>(scalars: 0..<9, shape: [3, 3])
    /// m[[1]].scalars          // [3, 4, 5]
    /// ```
    ///
    /// - Precondition: At most one index per axis, each in range; a new value has the slice's shape.
    public subscript<C: Collection>(indices: C) -> MLShapedArraySlice<Scalar> where C.Element == Int {
        get { MLShapedArraySlice(_core: _core.fixingLeading(indices, op: "\(Self._typeName)[indices]")) }
        set {
            _core.assign(
                newValue._core, toRegion: { $0.fixingLeading(indices, op: "\(Self._typeName)[indices]") },
                op: "\(Self._typeName)[indices]")
        }
    }

    /// The slice selecting `ranges` on the leading axes (later axes whole); the rank is kept.
    ///
    /// ```swift
    /// m[[0..<2, 1..<3]].shape     // [2, 2]
    /// ```
    ///
    /// - Precondition: At most one range per axis, each within `0...shape[axis]`; a new value
    ///   has the slice's shape.
    public subscript<C: Collection>(ranges: C) -> MLShapedArraySlice<Scalar> where C.Element == Range<Int> {
        get { MLShapedArraySlice(_core: _core.restricting(Array(ranges), op: "\(Self._typeName)[ranges]")) }
        set {
            let ranges = Array(ranges)
            _core.assign(
                newValue._core, toRegion: { $0.restricting(ranges, op: "\(Self._typeName)[ranges]") },
                op: "\(Self._typeName)[ranges]")
        }
    }

    /// The slice selecting one range expression per leading axis (later axes whole).
    ///
    /// ```swift
    /// m[1..., ..<2].shape         // [2, 2] for a [3, 3] array
    /// ```
    ///
    /// - Precondition: At most one range per axis, each within the axis; a new value has the
    ///   slice's shape.
    public subscript(ranges: any MLShapedArrayRangeExpression...) -> MLShapedArraySlice<Scalar> {
        get { self[resolving: ranges] }
        set { self[resolving: ranges] = newValue }
    }

    /// The slices `bounds` along the first axis, as one slice of the same rank whose indices
    /// start at 0.
    ///
    /// ```swift
    /// m[1..<3].shape              // [2, 3] for a [3, 3] array
    /// ```
    ///
    /// - Precondition: `bounds` is within `0...count`; a new value has the slice's shape.
    public subscript(bounds: Range<Int>) -> MLShapedArraySlice<Scalar> {
        get { self[[bounds]] }
        set { self[[bounds]] = newValue }
    }

    /// The whole array as a slice.
    ///
    /// ```swift
    /// m[...].shape == m.shape     // true
    /// ```
    public subscript(_: UnboundedRange) -> MLShapedArraySlice<Scalar> {
        get { MLShapedArraySlice(_core: _core) }
        set { _core.assign(newValue._core, toRegion: { $0 }, op: "\(Self._typeName)[...]") }
    }

    /// The range expressions made concrete against the leading axes.
    private subscript(resolving ranges: [any MLShapedArrayRangeExpression]) -> MLShapedArraySlice<Scalar> {
        get { self[resolved(ranges)] }
        set { self[resolved(ranges)] = newValue }
    }

    private func resolved(_ ranges: [any MLShapedArrayRangeExpression]) -> [Range<Int>] {
        let shape = self.shape
        kernelPrecondition(
            ranges.count <= shape.count,
            "[\(Self._typeName)[ranges]] \(ranges.count) ranges for shape \(shape) (rank \(shape.count))")
        return ranges.enumerated().map { axis, range in range.relative(toShapedArrayAxis: 0..<shape[axis]) }
    }
}

// MARK: - Collection

extension _MLShapedArrayCoreBacked {
    /// 0.
    public var startIndex: Int { 0 }
    /// ``count``: the size of the first axis.
    public var endIndex: Int { count }
}
