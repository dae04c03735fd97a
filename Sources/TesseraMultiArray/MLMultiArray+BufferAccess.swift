import Foundation
import TesseraKernels
import TesseraTensor

extension MLMultiArray {
    /// Calls `body` with the elements' memory as typed, read-only scalars: the fast way to read
    /// many elements.
    ///
    /// The buffer starts at element `[0, 0, …]` and ends at the farthest element; element
    /// `[i, j]` is `buffer[i * strides[0] + j * strides[1]]` (use ``strides``: the memory may be
    /// padded or transposed). It is valid only inside `body`.
    ///
    /// ```swift
    /// let total = scores.withUnsafeBufferPointer(ofType: Float.self) { $0.reduce(0, +) }  // contiguous
    /// ```
    ///
    /// - Precondition: `type` is the array's data type (`Float` for `.float32`, `Float16` for
    ///   `.float16`, `Double`, `Int32`, `Int8`). Use `MLShapedArray(converting:)` to read
    ///   another type.
    public func withUnsafeBufferPointer<S: MLShapedArrayScalar, R>(
        ofType type: S.Type, _ body: (UnsafeBufferPointer<S>) throws -> R
    ) rethrows -> R {
        checkType(S.self, op: "MLMultiArray.withUnsafeBufferPointer(ofType:_:)")
        let storage = self.storage
        return try withExtendedLifetime(storage) {
            try body(UnsafeBufferPointer(start: storage.pointer.assumingMemoryBound(to: S.self), count: span))
        }
    }

    /// Calls `body` with the elements' memory as typed, mutable scalars and the strides to
    /// address them: the fast way to write many elements.
    ///
    /// If a shaped array or tensor shares the memory, the array first moves to its own copy
    /// (same strides), so they keep their values. The buffer is valid only inside `body`.
    ///
    /// ```swift
    /// input.withUnsafeMutableBufferPointer(ofType: Float.self) { buffer, strides in
    ///     for c in 0..<3 { buffer[c * strides[1]] = 1 }      // [0, c, 0, 0] of a [1, 3, H, W] input
    /// }
    /// ```
    ///
    /// - Precondition: `type` is the array's data type.
    public func withUnsafeMutableBufferPointer<S: MLShapedArrayScalar, R>(
        ofType type: S.Type, _ body: (UnsafeMutableBufferPointer<S>, [Int]) throws -> R
    ) rethrows -> R {
        checkType(S.self, op: "MLMultiArray.withUnsafeMutableBufferPointer(ofType:_:)")
        prepareForWriting()
        let storage = self.storage
        return try withExtendedLifetime(storage) {
            try body(
                UnsafeMutableBufferPointer(start: storage.pointer.assumingMemoryBound(to: S.self), count: span),
                strideValues)
        }
    }

    /// Calls `body` with the elements' raw bytes, from element `[0, 0, …]` to the end of the
    /// farthest element. Valid only inside `body`.
    ///
    /// ```swift
    /// let data = array.withUnsafeBytes { Data($0) }
    /// ```
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        let storage = self.storage
        return try withExtendedLifetime(storage) {
            try body(UnsafeRawBufferPointer(start: storage.pointer, count: storage.byteCount))
        }
    }

    /// Calls `body` with the elements' raw, mutable bytes and the element strides to address
    /// them.
    ///
    /// As Core ML documents, the strides passed to `body` are the ones to use: if a shaped array
    /// or tensor shares the memory, the array first moves to its own copy. (Tessera keeps the
    /// strides unchanged when it copies.)
    ///
    /// ```swift
    /// array.withUnsafeMutableBytes { bytes, strides in
    ///     bytes.storeBytes(of: 1.5 as Float, toByteOffset: 2 * strides[0] * 4, as: Float.self)
    /// }
    /// ```
    public func withUnsafeMutableBytes<R>(_ body: (UnsafeMutableRawBufferPointer, [Int]) throws -> R) rethrows -> R {
        prepareForWriting()
        let storage = self.storage
        return try withExtendedLifetime(storage) {
            try body(UnsafeMutableRawBufferPointer(start: storage.pointer, count: storage.byteCount), strideValues)
        }
    }

    /// Traps unless `S` is the array's element type.
    func checkType<S: MLShapedArrayScalar>(_: S.Type, op: String) {
        kernelPrecondition(
            S.multiArrayDataType == dataType,
            "[\(op)] the array holds \(dataType) (\(dataType.displayName)) elements, not \(S.self)")
    }
}
