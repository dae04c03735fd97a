import Foundation
import TesseraMultiArray
import TesseraTensor
import Testing

@Suite("MLMultiArray concatenation and transfer")
struct MLMultiArrayCombiningTests {
    @Test("concatenating strided arrays of mixed types along each axis", arguments: [0, 1, 2, -1])
    func concatenate(_ axis: Int) throws {
        // Two [2, 3, 4] arrays with different layouts and types; the reference joins their
        // row-major values by index arithmetic.
        let (a, va) = try makeMultiArray(.padded, .float16)
        let (b, vb) = try makeMultiArray(.contiguous, .int32)
        let joined = MLMultiArray(concatenating: [a, b], axis: axis, dataType: .float32)
        let axis = axis < 0 ? axis + 3 : axis
        var shape = [2, 3, 4]
        shape[axis] *= 2
        #expect(joined.shape.map(\.intValue) == shape)
        #expect(joined.dataType == .float32)
        var expected: [Double] = []
        forEachIndex(shape) { index in
            var i = index
            let fromB = i[axis] >= [2, 3, 4][axis]
            if fromB { i[axis] -= [2, 3, 4][axis] }
            let flat = (i[0] * 3 + i[1]) * 4 + i[2]
            expected.append(fromB ? vb[flat] : va[flat])
        }
        #expect(logicalValues(joined) == expected)
    }

    @Test("concatenation with different sizes along the axis")
    func unevenConcatenation() throws {
        let a = try MLMultiArray([1, 2] as [Float])
        let b = try MLMultiArray([3, 4, 5] as [Double])
        let joined = MLMultiArray(concatenating: [a, b], axis: 0, dataType: .double)
        #expect(logicalValues(joined) == [1, 2, 3, 4, 5])
    }

    @Test("transfer between arrays sharing caller memory reads everything before writing")
    func overlappingTransfer() throws {
        let raw = UnsafeMutableRawPointer.allocate(byteCount: 4 * 4, alignment: 16)
        defer { raw.deallocate() }
        for i in 0..<4 { raw.storeBytes(of: Float(i), toByteOffset: i * 4, as: Float.self) }
        let rows = try MLMultiArray(dataPointer: raw, shape: [2, 2], dataType: .float32, strides: [2, 1])
        let columns = try MLMultiArray(dataPointer: raw, shape: [2, 2], dataType: .float32, strides: [1, 2])
        rows.transfer(to: columns)  // an in-place transpose
        #expect(logicalValues(rows) == [0, 2, 1, 3])
    }
}
