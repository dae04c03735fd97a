import Foundation
import TesseraKernels
import TesseraTensor

extension MLMultiArray {
    /// Creates a contiguous row-major array of `shape`, filled with zeros.
    ///
    /// A literal shape converts to `[NSNumber]`; a `[Int]` variable needs
    /// `shape.map { NSNumber(value: $0) }` (as on Apple platforms).
    ///
    /// ```swift
    /// let image = try MLMultiArray(shape: [1, 3, 224, 224], dataType: .float32)
    /// image.strides      // [150528, 50176, 224, 1]
    /// ```
    ///
    /// Core ML leaves the initial contents unspecified; Tessera zero-fills them.
    ///
    /// - Throws: ``MLMultiArrayError`` with code `.invalidShape` when a dimension is negative
    ///   or not a whole number, or the shape has too many elements.
    public convenience init(shape: [NSNumber], dataType: MLMultiArrayDataType) throws {
        let op = "MLMultiArray.init(shape:dataType:)"
        let dims = try MultiArrayLayout.integers(shape, what: "shape").mapError { $0.prefixed(op) }.get()
        _ = try MultiArrayLayout.count(of: dims, elementSize: dataType.byteCount).mapError { $0.prefixed(op) }.get()
        self.init(contiguousShape: dims, dataType: dataType, zeroed: true)
    }

    /// Creates an array of `shape` laid out with `strides` (in elements), for example padded
    /// rows. The memory spans `1 + Σ (shape[i] - 1) * strides[i]` elements; Tessera zero-fills
    /// it (Core ML leaves it uninitialized).
    ///
    /// ```swift
    /// // Rows of 3 floats padded to 4.
    /// let padded = MLMultiArray(shape: [2, 3], dataType: .float32, strides: [4, 1])
    /// ```
    ///
    /// - Precondition: no dimension is negative; `strides` has one non-negative entry per
    ///   dimension and no two elements share memory. Core ML's initializer does not throw, so
    ///   bad input stops the program with a message naming this initializer.
    public convenience init(shape: [Int], dataType: MLMultiArrayDataType, strides: [Int]) {
        let op = "MLMultiArray.init(shape:dataType:strides:)"
        let span: Int
        switch MultiArrayLayout.count(of: shape, elementSize: dataType.byteCount)
            .flatMap({ _ in MultiArrayLayout.span(shape: shape, strides: strides, elementSize: dataType.byteCount) })
        {
        case .success(let value): span = value
        case .failure(let error): kernelFailure(error.prefixed(op).message)
        }
        let storage = TensorStorage.allocateUnpooled(byteCount: span * dataType.byteCount, zeroed: true)
        dataType.bind(storage.pointer, count: span)
        self.init(storage: storage, shape: shape, strides: strides, dataType: dataType, span: span)
    }

    /// Creates an array over existing memory without copying it.
    ///
    /// Element `[i0, i1, …]` is read and written at `dataPointer + (i0 * strides[0] + i1 *
    /// strides[1] + …) * size`, where `size` is the data type's width in bytes. Writes through
    /// the array go to this memory, also while shaped arrays or tensors made from the array share
    /// it. `deallocator`, if given, runs when the array and everything sharing its memory are
    /// released; it does not run when the initializer throws.
    ///
    /// ```swift
    /// let p = UnsafeMutableRawPointer.allocate(byteCount: 6 * 4, alignment: 64)
    /// let a = try MLMultiArray(dataPointer: p, shape: [2, 3], dataType: .float32, strides: [3, 1]) {
    ///     $0.deallocate()
    /// }
    /// ```
    ///
    /// The memory must hold the farthest element, `1 + Σ (shape[i] - 1) * strides[i]`
    /// elements; Tessera cannot check the size of a raw allocation.
    ///
    /// - Throws: ``MLMultiArrayError``: `.invalidShape` for a negative or fractional dimension;
    ///   `.invalidStrides` when `strides` has the wrong count, a negative value, or makes two
    ///   elements overlap; `.misalignedPointer` when `dataPointer` is not aligned for the type.
    public convenience init(
        dataPointer: UnsafeMutableRawPointer, shape: [NSNumber], dataType: MLMultiArrayDataType, strides: [NSNumber],
        deallocator: ((UnsafeMutableRawPointer) -> Void)? = nil
    ) throws {
        let op = "MLMultiArray.init(dataPointer:shape:dataType:strides:deallocator:)"
        let size = dataType.byteCount
        let dims = try MultiArrayLayout.integers(shape, what: "shape").mapError { $0.prefixed(op) }.get()
        let steps = try MultiArrayLayout.integers(strides, what: "strides").mapError { $0.prefixed(op) }.get()
        _ = try MultiArrayLayout.count(of: dims, elementSize: size).mapError { $0.prefixed(op) }.get()
        let span = try MultiArrayLayout.span(shape: dims, strides: steps, elementSize: size)
            .mapError { $0.prefixed(op) }.get()
        guard Int(bitPattern: dataPointer) % size == 0 else {
            throw MLMultiArrayError(
                .misalignedPointer, "[\(op)] pointer \(dataPointer) is not aligned to \(size) bytes for \(dataType)")
        }
        let storage = TensorStorage(wrapping: dataPointer, byteCount: span * size, deallocator: deallocator)
        dataType.bind(dataPointer, count: span)
        self.init(storage: storage, shape: dims, strides: steps, dataType: dataType, span: span)
    }

    /// Creates a one-dimensional `.float32` array holding `data`.
    ///
    /// ```swift
    /// let v = try MLMultiArray([1.41, 1.73] as [Float])      // shape [2]
    /// ```
    ///
    /// - Throws: Never in Tessera; the signature is Core ML's.
    public convenience init<C: Collection>(_ data: C) throws where C.Element == Float {
        self.init(contiguousShape: [data.count], dataType: .float32, zeroed: false)
        let out = storage.pointer.assumingMemoryBound(to: Float.self)
        _ = UnsafeMutableBufferPointer(start: out, count: data.count).initialize(from: data)
    }

    /// Creates a one-dimensional `.double` array holding `data`.
    ///
    /// ```swift
    /// let v = try MLMultiArray([0.5, 0.25] as [Double])      // shape [2], .double
    /// ```
    ///
    /// - Throws: Never in Tessera; the signature is Core ML's.
    public convenience init<C: Collection>(_ data: C) throws where C.Element == Double {
        self.init(contiguousShape: [data.count], dataType: .double, zeroed: false)
        let out = storage.pointer.assumingMemoryBound(to: Double.self)
        _ = UnsafeMutableBufferPointer(start: out, count: data.count).initialize(from: data)
    }

    /// Creates a one-dimensional `.int32` array holding `data`.
    ///
    /// ```swift
    /// let ids = try MLMultiArray([101, 2023, 102])          // shape [3], .int32
    /// ```
    ///
    /// - Throws: ``MLMultiArrayError`` with code `.valueOutOfRange` when a value does not fit
    ///   in `Int32`.
    public convenience init<C: Collection>(_ data: C) throws where C.Element: FixedWidthInteger {
        self.init(contiguousShape: [data.count], dataType: .int32, zeroed: false)
        let out = storage.pointer.assumingMemoryBound(to: Int32.self)
        var i = 0
        for value in data {
            guard let narrow = Int32(exactly: value) else {
                throw MLMultiArrayError(
                    .valueOutOfRange, "[MLMultiArray.init(_:)] value \(value) at index \(i) does not fit in Int32")
            }
            out[i] = narrow
            i += 1
        }
    }
}

extension MLMultiArrayError {
    /// The same error with the call's name in brackets before the message.
    func prefixed(_ op: String) -> MLMultiArrayError {
        MLMultiArrayError(code, "[\(op)] \(message)")
    }
}
