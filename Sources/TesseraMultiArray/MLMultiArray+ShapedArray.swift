import Foundation
import TesseraKernels
import TesseraTensor

// MARK: - Shaped array → multi-array

extension MLMultiArray {
    /// Creates a multi-array with a shaped array's shape, scalars and data type
    /// (`Scalar.multiArrayDataType`), sharing its memory when it can.
    ///
    /// No copy is made for arrays and slices of any strides, transposed and sliced views
    /// included, as long as no two indices share an element: the multi-array takes the shaped
    /// array's strides and reads its memory. It copies that memory only when it is first
    /// written (see "Sharing and copies" on ``MLMultiArray``), so the shaped array keeps its
    /// values. A broadcast view (a stride of 0) is copied into contiguous memory at once.
    ///
    /// ```swift
    /// let probabilities = await logits.softmax().shapedArray(of: Float.self)
    /// let output = MLMultiArray(probabilities)      // .float32, no copy
    /// ```
    public convenience init<ShapedArray: MLShapedArrayProtocol>(_ shapedArray: ShapedArray) {
        let dataType = ShapedArray.Scalar.multiArrayDataType
        if let backed = shapedArray as? any _MLShapedArrayCoreBacked,
            let shared = MLMultiArray.sharing(backed, dataType: dataType)
        {
            self.init(
                storage: shared.storage, shape: shared.layout.shape, strides: shared.layout.strides, dataType: dataType,
                span: shared.span)
            return
        }
        let shape = shapedArray.shape
        self.init(contiguousShape: shape, dataType: dataType, zeroed: false)
        let destination = storage.pointer
        shapedArray.withUnsafeShapedBufferPointer { buffer, shape, strides in
            guard let base = buffer.baseAddress else { return }
            MultiArrayCopy.copy(
                from: base, layout: StridedLayout(shape: shape, strides: strides), type: dataType.kernelScalarType,
                to: destination, layout: StridedLayout(contiguous: shape), type: dataType.kernelScalarType)
        }
    }

    /// Borrowed storage over a shaped array's memory, or `nil` when its layout overlaps.
    private static func sharing(
        _ array: some _MLShapedArrayCoreBacked, dataType: MLMultiArrayDataType
    ) -> (storage: TensorStorage, layout: StridedLayout, span: Int)? {
        let (pointer, layout, owner) = array._storage
        guard MultiArrayLayout.isNonOverlapping(layout) else { return nil }
        let size = dataType.byteCount
        let span = layout.elementRange.map { $0.upperBound - layout.offset + 1 } ?? 0
        let storage = TensorStorage(borrowing: pointer + layout.offset * size, byteCount: span * size, keepAlive: owner)
        return (storage, StridedLayout(shape: layout.shape, strides: layout.strides), span)
    }
}

// MARK: - Multi-array → shaped array

extension MLShapedArrayProtocol {
    /// Creates a shaped array that reads a multi-array's elements, without copying them.
    ///
    /// The shaped array takes the multi-array's shape and strides (so a transposed or padded
    /// multi-array gives a transposed or padded view, read in the right order everywhere) and
    /// shares its memory, as Core ML documents: mutating the shaped array copies first, and the
    /// multi-array copies its memory before its next write, so neither sees the other's changes.
    ///
    /// ```swift
    /// let output = try MLMultiArray(shape: [1, 80, 3000], dataType: .float32)
    /// let mel = MLShapedArray<Float>(output)      // no copy
    /// let frames = mel.scalars                     // row-major, whatever output's strides
    /// ```
    ///
    /// - Precondition: `Scalar` is the multi-array's element type (`Float` for `.float32`, …).
    ///   To convert between types, use ``init(converting:)``.
    public init(_ multiArray: MLMultiArray) {
        multiArray.checkType(Scalar.self, op: "\(Self.self).init(_:) from MLMultiArray")
        if let backed = Self.self as? any _MLShapedArrayCoreBacked.Type {
            self = MLMultiArray.sharedArray(backed, multiArray) as! Self
            return
        }
        self.init(converting: multiArray)
    }

    /// Creates a contiguous row-major shaped array from a multi-array of any data type,
    /// converting each element to `Scalar`. Always copies, in one pass.
    ///
    /// Conversions follow NumPy's `astype`: floating-point to integer truncates toward zero
    /// and wraps; `Float` ⇄ `Float16` rounds to nearest even (vectorised).
    ///
    /// ```swift
    /// let halves = try MLMultiArray(shape: [2, 2], dataType: .float16)
    /// let floats = MLShapedArray<Float>(converting: halves)
    /// ```
    public init(converting multiArray: MLMultiArray) {
        let source = multiArray.layout
        let type = multiArray.dataType.kernelScalarType
        let storage = multiArray.storage
        self.init(unsafeUninitializedShape: source.shape) { buffer, _ in
            guard let base = buffer.baseAddress else { return }
            withExtendedLifetime(storage) {
                MultiArrayCopy.copy(
                    from: storage.pointer, layout: source, type: type, to: base,
                    layout: StridedLayout(contiguous: source.shape), type: Scalar.kernelScalarType)
            }
        }
    }
}

extension MLMultiArray {
    /// A shaped array of type `A` over the multi-array's current memory (no copy).
    fileprivate static func sharedArray<A: _MLShapedArrayCoreBacked>(_: A.Type, _ multiArray: MLMultiArray) -> A {
        let storage = multiArray.storage
        return A(
            _sharing: storage.pointer, byteCount: storage.byteCount, owner: storage,
            layout: multiArray.layout)
    }
}
