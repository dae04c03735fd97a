import Foundation
import TesseraMultiArray
import TesseraTensor

/// Every data type, for parameterized tests.
let allDataTypes: [MLMultiArrayDataType] = [.double, .float32, .float16, .int32, .int8]

/// The memory layouts round trips are tested on.
enum LayoutKind: String, CaseIterable, CustomStringConvertible, Sendable {
    /// Row-major [2, 3, 4].
    case contiguous
    /// A [4, 3, 2] view of row-major [2, 3, 4] memory (axes reversed).
    case transposed
    /// A [2, 2, 3] window starting at [0, 1, 1] of row-major [2, 3, 4] memory.
    case sliced
    /// [2, 3, 4] with rows padded to 5 elements and planes to 17.
    case padded

    var description: String { rawValue }

    /// The logical shape.
    var shape: [Int] {
        switch self {
        case .contiguous, .padded: return [2, 3, 4]
        case .transposed: return [4, 3, 2]
        case .sliced: return [2, 2, 3]
        }
    }

    /// The strides in elements.
    var strides: [Int] {
        switch self {
        case .contiguous: return [12, 4, 1]
        case .transposed: return [1, 4, 12]
        case .sliced: return [12, 4, 1]
        case .padded: return [17, 5, 1]
        }
    }

    /// Elements of memory to allocate, and the offset of element [0, 0, 0].
    var memory: (count: Int, start: Int) {
        switch self {
        case .contiguous, .transposed: return (24, 0)
        case .sliced: return (24, 5)
        case .padded: return (34, 0)
        }
    }
}

/// The value stored at memory position `position`: distinct, exactly representable in every
/// data type (Int8 included), and negative for some positions.
func memoryValue(_ position: Int) -> Double { Double(position % 200) - 60 }

/// A multi-array over fresh memory with `kind`'s layout, and its elements in row-major order
/// computed here from the layout alone (the reference the tests compare with).
func makeMultiArray(_ kind: LayoutKind, _ dataType: MLMultiArrayDataType) throws -> (MLMultiArray, [Double]) {
    let size = byteCount(dataType)
    let (count, start) = kind.memory
    let raw = UnsafeMutableRawPointer.allocate(byteCount: count * size, alignment: 64)
    for position in 0..<count { store(memoryValue(position), dataType, raw + position * size) }
    let array = try MLMultiArray(
        dataPointer: raw + start * size, shape: kind.shape.map { NSNumber(value: $0) }, dataType: dataType,
        strides: kind.strides.map { NSNumber(value: $0) }, deallocator: { _ in raw.deallocate() })
    var expected: [Double] = []
    forEachIndex(kind.shape) { index in
        let offset = zip(index, kind.strides).map(*).reduce(0, +)
        expected.append(memoryValue(start + offset))
    }
    return (array, expected)
}

/// Calls `body` with every index of `shape` in row-major order.
func forEachIndex(_ shape: [Int], _ body: ([Int]) -> Void) {
    if shape.contains(0) { return }
    var index = [Int](repeating: 0, count: shape.count)
    while true {
        body(index)
        var axis = shape.count - 1
        while axis >= 0 {
            index[axis] += 1
            if index[axis] < shape[axis] { break }
            index[axis] = 0
            axis -= 1
        }
        if axis < 0 { return }
    }
}

/// A multi-array's elements in row-major order, read from its raw bytes with its strides: an
/// independent reader that uses only `withUnsafeBytes`, `shape` and `strides`.
func logicalValues(_ array: MLMultiArray) -> [Double] {
    let shape = array.shape.map(\.intValue)
    let strides = array.strides.map(\.intValue)
    let size = byteCount(array.dataType)
    var values: [Double] = []
    array.withUnsafeBytes { bytes in
        forEachIndex(shape) { index in
            let offset = zip(index, strides).map(*).reduce(0, +)
            values.append(load(array.dataType, bytes.baseAddress! + offset * size))
        }
    }
    return values
}

func byteCount(_ dataType: MLMultiArrayDataType) -> Int {
    switch dataType {
    case .double: return 8
    case .float32, .int32: return 4
    case .float16: return 2
    case .int8: return 1
    }
}

func store(_ value: Double, _ dataType: MLMultiArrayDataType, _ pointer: UnsafeMutableRawPointer) {
    switch dataType {
    case .double: pointer.storeBytes(of: value, as: Double.self)
    case .float32: pointer.storeBytes(of: Float(value), as: Float.self)
    case .float16: pointer.storeBytes(of: Float16(value), as: Float16.self)
    case .int32: pointer.storeBytes(of: Int32(value), as: Int32.self)
    case .int8: pointer.storeBytes(of: Int8(value), as: Int8.self)
    }
}

func load(_ dataType: MLMultiArrayDataType, _ pointer: UnsafeRawPointer) -> Double {
    switch dataType {
    case .double: return pointer.loadUnaligned(as: Double.self)
    case .float32: return Double(pointer.loadUnaligned(as: Float.self))
    case .float16: return Double(pointer.loadUnaligned(as: Float16.self))
    case .int32: return Double(pointer.loadUnaligned(as: Int32.self))
    case .int8: return Double(pointer.loadUnaligned(as: Int8.self))
    }
}

/// The address of element [0, 0, …] as the raw-bytes view reports it.
func baseAddress(_ array: MLMultiArray) -> UnsafeRawPointer? {
    array.withUnsafeBytes { $0.baseAddress }
}

/// The address of a shaped array's element [0, 0, …].
func baseAddress<S>(_ array: MLShapedArray<S>) -> UnsafeRawPointer? {
    array.withUnsafeShapedBufferPointer { buffer, _, _ in buffer.baseAddress.map(UnsafeRawPointer.init) }
}

/// Every data type with every layout.
let typesAndLayouts: [(MLMultiArrayDataType, LayoutKind)] = allDataTypes.flatMap { type in
    LayoutKind.allCases.map { (type, $0) }
}
