import Foundation
import Testing
import TesseraKernels
import TesseraTensor

@Suite("MLShapedArray")
struct ShapedArrayTests {
    @Test("scalars, shape, strides, element access and slices")
    func basics() {
        var a = MLShapedArray<Float>(scalars: [1, 2, 3, 4, 5, 6], shape: [2, 3])
        #expect(a.shape == [2, 3] && a.strides == [3, 1] && a.count == 2 && a.scalarCount == 6)
        #expect(a[scalarAt: 1, 2] == 6)
        #expect(a[1].scalars == [4, 5, 6] && a[1].shape == [3])
        a[scalarAt: [0, 1]] = 20
        #expect(a.scalars == [1, 20, 3, 4, 5, 6])
        a[0] = MLShapedArraySlice(scalars: [7, 8, 9], shape: [3])
        #expect(a.scalars == [7, 8, 9, 4, 5, 6])
        #expect(a.map(\.scalars) == [[7, 8, 9], [4, 5, 6]])
        #expect(a.description == "[[7.0, 8.0, 9.0], [4.0, 5.0, 6.0]]")
        let s = MLShapedArray<Int32>(scalar: 5)
        #expect(s.isScalar && s.scalar == 5 && s.shape == [])
        let literal: MLShapedArray<Int8> = [1, 2, 3]
        #expect(literal.shape == [3])
    }

    @Test("copy on write: a copy keeps its values; a unique array mutates in place")
    func copyOnWrite() {
        var a = MLShapedArray<Int32>(repeating: 1, shape: [4])
        let b = a
        a[scalarAt: 0] = 9
        #expect(b.scalars == [1, 1, 1, 1] && a.scalars == [9, 1, 1, 1])
        let before = a.withUnsafeShapedBufferPointer { buffer, _, _ in buffer.baseAddress }
        a[scalarAt: 1] = 8
        let after = a.withUnsafeShapedBufferPointer { buffer, _, _ in buffer.baseAddress }
        #expect(before == after)
    }

    @Test("strided data, reshape, transpose, concatenation, Codable")
    func layouts() throws {
        let values: [Float] = [1, 2, 3, 4, 5, 6]
        let data = values.withUnsafeBytes { Data($0) }
        // Column-major [2, 3] read through strides [1, 2].
        let t = MLShapedArray<Float>(data: data, shape: [2, 3], strides: [1, 2])
        #expect(t.scalars == [1, 3, 5, 2, 4, 6])
        #expect(t.transposed().scalars == [1, 2, 3, 4, 5, 6])
        #expect(t.reshaped(to: [3, 2]).shape == [3, 2])
        let joined = MLShapedArray(concatenating: [t, t], alongAxis: 1)
        #expect(joined.shape == [2, 6] && joined.scalars == [1, 3, 5, 1, 3, 5, 2, 4, 6, 2, 4, 6])
        let decoded = try JSONDecoder().decode(MLShapedArray<Float>.self, from: JSONEncoder().encode(t))
        #expect(decoded == t)
        let empty = MLShapedArray<Float>(scalars: [], shape: [0, 3])
        #expect(empty.scalarCount == 0 && empty.isEmpty)
    }

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
