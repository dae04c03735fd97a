import Foundation
import TesseraKernels
import TesseraTensor

extension MLMultiArray {
    /// Creates a contiguous array by joining multi-arrays along an axis, converting each
    /// element to `dataType`.
    ///
    /// Every array must have the same rank and the same size on every axis but `axis`; the
    /// result's size along `axis` is the sum of theirs. Inputs may have any strides and data
    /// types.
    ///
    /// ```swift
    /// let a = try MLMultiArray(shape: [1, 4], dataType: .float32)
    /// let b = try MLMultiArray(shape: [2, 4], dataType: .float16)
    /// let ab = MLMultiArray(concatenating: [a, b], axis: 0, dataType: .float32)   // [3, 4]
    /// ```
    ///
    /// - Precondition: there is at least one array, `axis` is in `-rank..<rank`, and the shapes
    ///   agree off the axis. Core ML's initializer does not throw, so bad input stops the
    ///   program with a message naming this initializer and the shapes.
    public convenience init(concatenating multiArrays: [MLMultiArray], axis: Int, dataType: MLMultiArrayDataType) {
        let op = "MLMultiArray.init(concatenating:axis:dataType:)"
        let (axis, shape) = CopyKernels.concatenatedShape(multiArrays.map(\.shapeValues), axis: axis, op: op)
        if case .failure(let error) = MultiArrayLayout.count(of: shape, elementSize: dataType.byteCount) {
            kernelFailure(error.prefixed(op).message)
        }
        self.init(contiguousShape: shape, dataType: dataType, zeroed: false)
        let outStrides = strideValues
        var start = 0
        for array in multiArrays {
            let slot = StridedLayout(shape: array.shapeValues, strides: outStrides, offset: start * outStrides[axis])
            withExtendedLifetime(array.storage) {
                MultiArrayCopy.copy(
                    from: array.readPointer, layout: array.layout, type: array.dataType.kernelScalarType,
                    to: storage.pointer, layout: slot, type: dataType.kernelScalarType)
            }
            start += array.shapeValues[axis]
        }
    }

    /// Copies every element into another multi-array of the same shape, converting to its data
    /// type and writing through its strides.
    ///
    /// ```swift
    /// let halves = try MLMultiArray(shape: [2, 3], dataType: .float16)
    /// floats.transfer(to: halves)                 // Float32 → Float16, rounded to nearest even
    /// let padded = MLMultiArray(shape: [2, 3], dataType: .float32, strides: [4, 1])
    /// floats.transfer(to: padded)                 // padding untouched
    /// ```
    ///
    /// If something shares the destination's memory it moves to its own copy first (see
    /// "Sharing and copies"); overlapping source and destination memory is handled.
    ///
    /// - Precondition: the shapes are equal. Core ML's method does not throw, so a mismatch
    ///   stops the program with a message naming this method and both shapes.
    public func transfer(to destinationMultiArray: MLMultiArray) {
        let op = "MLMultiArray.transfer(to:)"
        let destination = destinationMultiArray
        kernelPrecondition(
            destination.shapeValues == shapeValues,
            "[\(op)] shapes differ: \(shapeValues) vs destination \(destination.shapeValues)")
        if destination === self { return }
        destination.prepareForWriting()
        let source = storage
        let target = destination.storage
        let type = dataType.kernelScalarType
        withExtendedLifetime((source, target)) {
            let sourceBytes = UnsafeRawPointer(source.pointer)..<UnsafeRawPointer(source.pointer + source.byteCount)
            let targetBytes = UnsafeRawPointer(target.pointer)..<UnsafeRawPointer(target.pointer + target.byteCount)
            if sourceBytes.overlaps(targetBytes) {
                // Wrapped memory can alias: read everything before writing anything.
                let staging = AlignedBuffer(unpooledByteCount: count * dataType.byteCount)
                MultiArrayCopy.copy(
                    from: source.pointer, layout: layout, type: type, to: staging.pointer,
                    layout: StridedLayout(contiguous: shapeValues), type: type)
                MultiArrayCopy.copy(
                    from: staging.pointer, layout: StridedLayout(contiguous: shapeValues), type: type,
                    to: target.pointer, layout: destination.layout, type: destination.dataType.kernelScalarType)
                withExtendedLifetime(staging) {}
            } else {
                MultiArrayCopy.copy(
                    from: source.pointer, layout: layout, type: type, to: target.pointer, layout: destination.layout,
                    type: destination.dataType.kernelScalarType)
            }
        }
    }
}
