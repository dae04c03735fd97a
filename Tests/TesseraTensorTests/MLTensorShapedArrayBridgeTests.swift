import Foundation
import TesseraKernels
import TesseraTensor
import Testing

@Suite("MLTensor and MLShapedArray")
struct MLTensorShapedArrayBridgeTests {
    @Test("MLTensor round trips share storage when the layout allows")
    func tensorRoundTrip() async {
        let a = MLShapedArray<Float>(scalars: (0..<12).map(Float.init), shape: [3, 4])
        let tensor = MLTensor(a)
        #expect(tensor.shape == [3, 4])
        let back = await tensor.shapedArray(of: Float.self)
        let pointers = (
            a.withUnsafeShapedBufferPointer { buffer, _, _ in buffer.baseAddress },
            back.withUnsafeShapedBufferPointer { buffer, _, _ in buffer.baseAddress }
        )
        #expect(pointers.0 == pointers.1)
        let transposed = await tensor.transposed().shapedArray(of: Float.self)
        // A transposed view crosses over without a copy too: same memory, permuted strides.
        #expect(transposed.withUnsafeShapedBufferPointer { buffer, _, _ in buffer.baseAddress } == pointers.0)
        let fromView = MLTensor(transposed)
        #expect(await (fromView + 0).shapedArray(of: Float.self).scalars == transposed.scalars)
        #expect(transposed.shape == [4, 3] && transposed[scalarAt: 1, 0] == 1)
        let halves = await tensor.cast(to: Float16.self).shapedArray(of: Float16.self)
        #expect(halves.scalars.map(Float.init) == a.scalars)
        #expect(synchronousDouble(tensor).scalars == (0..<12).map { Int32($0 * 2) })
    }

    /// In synchronous code Swift picks the blocking overload of `shapedArray(of:)`.
    private func synchronousDouble(_ tensor: MLTensor) -> MLShapedArray<Int32> {
        (tensor.cast(to: Int32.self) * 2).shapedArray(of: Int32.self)
    }

    @Test("many tasks read one array and one tensor")
    func concurrentReads() async {
        let a = MLShapedArray<Float>(scalars: (0..<1000).map(Float.init), shape: [1000])
        let tensor = MLTensor(a)
        let sums = await withTaskGroup(of: Float.self) { group in
            for _ in 0..<16 { group.addTask { await (tensor * 2).sum().shapedArray(of: Float.self).scalar! } }
            var all: [Float] = []
            for await s in group { all.append(s) }
            return all
        }
        #expect(sums.allSatisfy { $0 == 999_000 })
        #expect(a.scalars.count == 1000)
    }
}
