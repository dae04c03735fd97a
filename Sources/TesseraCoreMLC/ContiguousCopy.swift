import Foundation
import TesseraMultiArray
import TesseraTensor

/// Copies between a multi-array of any strides and contiguous row-major memory.
enum ContiguousCopy {
    /// The size in bytes of one element of `dataType`.
    static func elementSize(_ dataType: MLMultiArrayDataType) -> Int {
        switch dataType {
        case .double: 8
        case .float32, .int32: 4
        case .float16: 2
        case .int8: 1
        }
    }

    /// Copies `array`'s elements into `destination`, row-major; false (nothing copied) unless
    /// `byteCount` is exactly the array's size.
    ///
    /// ```swift
    /// ContiguousCopy.copy(array, to: buffer, byteCount: array.count * 4)
    /// ```
    static func copy(_ array: MLMultiArray, to destination: UnsafeMutableRawPointer, byteCount: Int) -> Bool {
        let size = elementSize(array.dataType)
        guard byteCount == array.count * size else { return false }
        let shape = array.shapeValues
        let strides = array.strideValues
        array.withUnsafeBytes { source in
            guard let base = source.baseAddress else { return }
            walk(shape: shape, strides: strides, size: size) { offset, element in
                (destination + element * size).copyMemory(from: base + offset * size, byteCount: size)
            } contiguous: {
                destination.copyMemory(from: base, byteCount: byteCount)
            }
        }
        return true
    }

    /// Copies contiguous row-major `source` of `byteCount` bytes into `array`; false (nothing
    /// copied) unless `byteCount` is exactly the array's size.
    ///
    /// ```swift
    /// ContiguousCopy.copy(buffer, byteCount: 16, into: state)
    /// ```
    static func copy(_ source: UnsafeRawPointer, byteCount: Int, into array: MLMultiArray) -> Bool {
        let size = elementSize(array.dataType)
        guard byteCount == array.count * size else { return false }
        let shape = array.shapeValues
        array.withUnsafeMutableBytes { target, strides in
            guard let base = target.baseAddress else { return }
            walk(shape: shape, strides: strides, size: size) { offset, element in
                (base + offset * size).copyMemory(from: source + element * size, byteCount: size)
            } contiguous: {
                base.copyMemory(from: source, byteCount: byteCount)
            }
        }
        return true
    }

    /// Calls `contiguous` when the strides are row-major, else `element(offset, index)` for
    /// every element (its strided offset and row-major index, in elements).
    private static func walk(
        shape: [Int], strides: [Int], size: Int, element: (Int, Int) -> Void, contiguous: () -> Void
    ) {
        var expected = 1
        var isContiguous = true
        for axis in shape.indices.reversed() {
            if shape[axis] != 1 && strides[axis] != expected { isContiguous = false }
            expected *= shape[axis]
        }
        if isContiguous || expected == 0 {
            if expected > 0 { contiguous() }
            return
        }
        var index = [Int](repeating: 0, count: shape.count)
        for linear in 0..<expected {
            var offset = 0
            for axis in shape.indices { offset += index[axis] * strides[axis] }
            element(offset, linear)
            var axis = shape.count - 1
            while axis >= 0 {
                index[axis] += 1
                if index[axis] < shape[axis] { break }
                index[axis] = 0
                axis -= 1
            }
        }
    }
}
