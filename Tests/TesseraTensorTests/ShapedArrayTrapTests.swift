import Foundation
import TesseraTensor
import Testing

/// Programmer errors stop the process with a message naming the member and the shapes.
@Suite("MLShapedArray traps")
struct ShapedArrayTrapTests {
    @Test("a scalar count that does not match the shape traps with both")
    func countMismatch() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = MLShapedArray<Float>(scalars: [1, 2, 3, 4, 5], shape: [2, 3])
        }
        let message = result.map { String(decoding: $0.standardErrorContent, as: UTF8.self) } ?? ""
        #expect(message.contains("[MLShapedArray.init(scalars:shape:)] scalar count 5 does not match shape [2, 3]"))
    }

    @Test("an out-of-range index traps with the index and the shape")
    func indexOutOfRange() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let m = MLShapedArray<Int32>(repeating: 0, shape: [2, 3])
            _ = m[scalarAt: 1, 3]
        }
        let message = result.map { String(decoding: $0.standardErrorContent, as: UTF8.self) } ?? ""
        #expect(message.contains("[MLShapedArray[scalarAt:]] index [1, 3] is out of range for shape [2, 3]"))
    }

    @Test("a bad permutation traps")
    func badPermutation() async {
        await #expect(processExitsWith: .failure) {
            _ = MLShapedArray<Float>(repeating: 0, shape: [2, 3]).transposed(permutation: [0, 0])
        }
    }
}
