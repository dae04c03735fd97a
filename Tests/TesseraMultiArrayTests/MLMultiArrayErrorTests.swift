import Foundation
import TesseraMultiArray
import TesseraTensor
import Testing

/// Bad input to the throwing initializers throws a typed error naming the call.
@Suite("MLMultiArray errors")
struct MLMultiArrayErrorTests {
    private func code(_ body: () throws -> Void) -> (MLMultiArrayError.Code, String)? {
        do {
            try body()
            return nil
        } catch let error as MLMultiArrayError {
            return (error.code, error.message)
        } catch {
            return nil
        }
    }

    @Test("a negative or fractional dimension")
    func badShape() {
        let negative = code { _ = try MLMultiArray(shape: [2, -1], dataType: .float32) }
        #expect(negative?.0 == .invalidShape)
        #expect(negative?.1 == "[MLMultiArray.init(shape:dataType:)] shape [2, -1] has a negative dimension")
        #expect(
            code { _ = try MLMultiArray(shape: [NSNumber(value: 2), NSNumber(value: 1.5)], dataType: .float32) }?.0
                == .invalidShape)
        #expect(
            code { _ = try MLMultiArray(shape: [NSNumber(value: Int.max), 4], dataType: .float32) }?.0 == .invalidShape)
    }

    @Test(
        "data pointer strides that do not fit the shape",
        arguments: [
            ([2, 3], [3], "do not match shape"),  // wrong count
            ([2, 3], [3, -1], "negative"),
            ([2, 3], [2, 1], "overlap"),  // rows of 3 with a row stride of 2
            ([4, 4], [1, 1], "overlap"),
            ([2, 3], [1, 1], "overlap"),
        ])
    func badStrides(_ shape: [Int], _ strides: [Int], _ phrase: String) {
        let memory = UnsafeMutableRawPointer.allocate(byteCount: 64, alignment: 64)
        defer { memory.deallocate() }
        var released = false
        let result = code {
            _ = try MLMultiArray(
                dataPointer: memory, shape: shape.map { NSNumber(value: $0) }, dataType: .float32,
                strides: strides.map { NSNumber(value: $0) }, deallocator: { _ in released = true })
        }
        #expect(result?.0 == .invalidStrides)
        #expect(result?.1.hasPrefix("[MLMultiArray.init(dataPointer:shape:dataType:strides:deallocator:)]") == true)
        #expect(result?.1.contains(phrase) == true)
        #expect(!released)
    }

    @Test("valid unusual strides are accepted: column-major, padded, size-1 dimensions with any stride")
    func goodStrides() throws {
        let memory = UnsafeMutableRawPointer.allocate(byteCount: 256, alignment: 64)
        defer { memory.deallocate() }
        for (shape, strides) in [([2, 3], [1, 2]), ([2, 3], [4, 1]), ([1, 3], [0, 1]), ([3, 1, 2], [2, 0, 1])] {
            _ = try MLMultiArray(
                dataPointer: memory, shape: shape.map { NSNumber(value: $0) }, dataType: .float32,
                strides: strides.map { NSNumber(value: $0) })
        }
    }

    @Test("a misaligned data pointer")
    func misaligned() {
        let memory = UnsafeMutableRawPointer.allocate(byteCount: 64, alignment: 64)
        defer { memory.deallocate() }
        let result = code {
            _ = try MLMultiArray(dataPointer: memory + 1, shape: [4], dataType: .float32, strides: [1])
        }
        #expect(result?.0 == .misalignedPointer)
    }

    @Test("an integer that does not fit in Int32")
    func integerOutOfRange() {
        let result = code { _ = try MLMultiArray([1, Int(Int32.max) + 1]) }
        #expect(result?.0 == .valueOutOfRange)
        #expect(result?.1.contains("value 2147483648 at index 1") == true)
    }

    @Test("a typed buffer of another data type")
    func dataTypeMismatch() throws {
        let a = try MLMultiArray([1, 2, 3] as [Float])
        let result = code { _ = try UnsafeBufferPointer<Int32>(a) }
        #expect(result?.0 == .dataTypeMismatch)
        #expect(result?.1 == "[UnsafeBufferPointer.init(_:)] the array holds float32 (Float32) elements, not Int32")
        let floats = try UnsafeBufferPointer<Float>(a)
        #expect(Array(floats) == [1, 2, 3])
        let shaped = MLShapedArray<Float>(a)
        let writable = try UnsafeMutableBufferPointer<Float>(a)
        writable[0] = 10
        #expect(a[0].floatValue == 10 && shaped.scalars == [1, 2, 3])
    }
}
