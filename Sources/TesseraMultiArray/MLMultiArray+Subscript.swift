import Foundation
import TesseraKernels
import TesseraTensor

extension MLMultiArray {
    /// The element at a linear offset from ``dataPointer``, as a number.
    ///
    /// As in Core ML, `idx` is a memory offset in elements: for a multidimensional array,
    /// element `[i, j, k]` is at `i * strides[0] + j * strides[1] + k * strides[2]`. For a
    /// contiguous row-major array that is the element's row-major position; for a padded or
    /// transposed array it is not (offsets in padding are valid and read the padding).
    ///
    /// ```swift
    /// let a = try MLMultiArray([10, 20, 30] as [Float])
    /// a[1].floatValue           // 20
    /// a[2] = 3.5                // Float(3.5) stored
    /// ```
    ///
    /// Each access boxes an `NSNumber`; loops should use
    /// ``withUnsafeBufferPointer(ofType:_:)`` instead. Setting converts the number to the
    /// ``dataType`` (`floatValue`, `int32Value`, …).
    ///
    /// - Precondition: `0 <= idx` and `idx` is at most the offset of the last element; the
    ///   message names the offset, the shape and the strides.
    public subscript(idx: Int) -> NSNumber {
        get {
            checkOffset(idx, op: "MLMultiArray[_: Int]")
            return withExtendedLifetime(storage) { dataType.load(readPointer + idx * dataType.byteCount) }
        }
        set {
            checkOffset(idx, op: "MLMultiArray[_: Int]")
            prepareForWriting()
            dataType.store(newValue, at: storage.pointer + idx * dataType.byteCount)
        }
    }

    /// The element at a multidimensional index, as a number: one index per dimension.
    ///
    /// ```swift
    /// let m = try MLMultiArray(shape: [5, 29, 17], dataType: .double)
    /// m[[3, 5, 7] as [NSNumber]] = 3.14159
    /// m[[3, 5, 7] as [NSNumber]].doubleValue        // 3.14159
    /// ```
    ///
    /// Each access boxes numbers; loops should use ``withUnsafeBufferPointer(ofType:_:)``.
    ///
    /// - Precondition: `key` has one in-range index per dimension.
    public subscript(key: [NSNumber]) -> NSNumber {
        get {
            let offset = self.offset(of: key, op: "MLMultiArray[_: [NSNumber]]")
            return withExtendedLifetime(storage) { dataType.load(readPointer + offset * dataType.byteCount) }
        }
        set {
            let offset = self.offset(of: key, op: "MLMultiArray[_: [NSNumber]]")
            prepareForWriting()
            dataType.store(newValue, at: storage.pointer + offset * dataType.byteCount)
        }
    }

    /// Traps unless `offset` addresses memory inside the array's span.
    private func checkOffset(_ offset: Int, op: String) {
        kernelPrecondition(
            offset >= 0 && offset < span,
            "[\(op)] linear offset \(offset) is out of range for shape \(shapeValues) with strides \(strideValues) "
                + "(valid offsets 0..<\(span))")
    }

    /// The linear offset of `key`, after checking it has one in-range index per dimension.
    private func offset(of key: [NSNumber], op: String) -> Int {
        kernelPrecondition(
            key.count == shapeValues.count,
            "[\(op)] \(key.count) indices \(key.map(\.intValue)) for shape \(shapeValues) (rank \(shapeValues.count))")
        var offset = 0
        for axis in 0..<key.count {
            let index = key[axis].intValue
            kernelPrecondition(
                index >= 0 && index < shapeValues[axis],
                "[\(op)] index \(key.map(\.intValue)) is out of range for shape \(shapeValues)")
            offset += index * strideValues[axis]
        }
        return offset
    }
}
