import Foundation
import TesseraMultiArray
import TesseraTensor
import Testing

/// Empty and rank-0 arrays, and slices, through every conversion.
@Suite("MLMultiArray edge cases")
struct MLMultiArrayEdgeCaseTests {
    @Test("empty arrays convert, concatenate and transfer without touching memory")
    func emptyArrays() async throws {
        let empty = try MLMultiArray(shape: [0, 3], dataType: .float16)
        #expect(empty.count == 0)
        #expect(MLShapedArray<Float16>(empty).shape == [0, 3])
        #expect(MLShapedArray<Float>(converting: empty).scalars.isEmpty)
        #expect(MLTensor(empty).shape == [0, 3])
        let back = await MLTensor(empty).multiArray(dataType: .float32)
        #expect(back.shape == [0, 3] && back.count == 0)
        let padded = MLMultiArray(shape: [0, 3], dataType: .int8, strides: [5, 1])
        empty.transfer(to: padded)
        let joined = MLMultiArray(
            concatenating: [empty, try MLMultiArray(shape: [2, 3], dataType: .float32)], axis: 0, dataType: .int32)
        #expect(joined.shape == [2, 3] && logicalValues(joined) == [0, 0, 0, 0, 0, 0])
        #expect(empty.description == "Float16 0 × 3 array []")
    }

    @Test("rank-0 shaped arrays and tensors")
    func rankZero() async {
        let one = MLShapedArray<Int32>(scalar: 42)
        let a = MLMultiArray(one)
        #expect(a.shape == [] && a.count == 1 && a[0].int32Value == 42)
        #expect(MLShapedArray<Int32>(a).scalar == 42)
        let sum = await MLTensor(shape: [3], scalars: [1, 2, 3] as [Float]).sum().multiArray()
        #expect(sum.shape == [] && sum[0].floatValue == 6)
    }

    @Test("MLShapedArraySlice(multiArray) shares too")
    func sliceFromMultiArray() throws {
        let (a, expected) = try makeMultiArray(.padded, .float32)
        let slice = MLShapedArraySlice<Float>(a)
        #expect(slice.scalars == expected.map { Float($0) })
        #expect(slice[1].scalars == expected[12...].map { Float($0) })
    }
}
