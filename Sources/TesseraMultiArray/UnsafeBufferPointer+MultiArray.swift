import Foundation
import TesseraKernels
import TesseraTensor

extension UnsafeBufferPointer where Element: MLShapedArrayScalar {
    /// A typed view of a multi-array's memory, from element `[0, 0, …]` to the farthest
    /// element (address elements with the array's strides).
    ///
    /// Core ML deprecates this initializer: the buffer does not keep the array alive. Keep the
    /// array alive while you use it, or prefer ``MLMultiArray/withUnsafeBufferPointer(ofType:_:)``.
    ///
    /// ```swift
    /// let scores = try UnsafeBufferPointer<Float>(output)
    /// ```
    ///
    /// - Throws: ``MLMultiArrayError`` with code `.dataTypeMismatch` when `Element` is not the
    ///   array's data type.
    public init(_ multiArray: MLMultiArray) throws {
        try multiArray.requireType(Element.self, op: "UnsafeBufferPointer.init(_:)")
        self.init(
            start: UnsafePointer(multiArray.storage.pointer.assumingMemoryBound(to: Element.self)),
            count: multiArray.span)
    }
}

extension UnsafeMutableBufferPointer where Element: MLShapedArrayScalar {
    /// A typed, mutable view of a multi-array's memory, from element `[0, 0, …]` to the
    /// farthest element (address elements with the array's strides).
    ///
    /// Counts as a write: if a shaped array or tensor shares the memory, the array first moves
    /// to its own copy. Core ML deprecates this initializer: the buffer does not keep the array
    /// alive; prefer ``MLMultiArray/withUnsafeMutableBufferPointer(ofType:_:)``.
    ///
    /// ```swift
    /// let input = try UnsafeMutableBufferPointer<Float>(array)
    /// input[0] = 1
    /// ```
    ///
    /// - Throws: ``MLMultiArrayError`` with code `.dataTypeMismatch` when `Element` is not the
    ///   array's data type.
    public init(_ multiArray: MLMultiArray) throws {
        try multiArray.requireType(Element.self, op: "UnsafeMutableBufferPointer.init(_:)")
        self.init(start: multiArray.dataPointer.assumingMemoryBound(to: Element.self), count: multiArray.span)
    }
}

extension MLMultiArray {
    /// Throws unless `S` is the array's element type.
    func requireType<S: MLShapedArrayScalar>(_: S.Type, op: String) throws {
        guard S.multiArrayDataType == dataType else {
            throw MLMultiArrayError(
                .dataTypeMismatch,
                "[\(op)] the array holds \(dataType) (\(dataType.displayName)) elements, not \(S.self)")
        }
    }
}
