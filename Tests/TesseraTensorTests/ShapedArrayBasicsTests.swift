import Foundation
import TesseraKernels
import Testing

@testable import TesseraTensor

/// Creation, reading and the scalar protocol. Expected values are written out by hand
/// (row-major / NumPy C order).
@Suite("MLShapedArray basics")
struct ShapedArrayBasicsTests {
    @Test("data type raw values match Core ML")
    func dataTypeRawValues() {
        #expect(MLMultiArrayDataType.double.rawValue == 65600)
        #expect(MLMultiArrayDataType.float64 == .double)
        #expect(MLMultiArrayDataType.float32.rawValue == 65568)
        #expect(MLMultiArrayDataType.float == .float32)
        #expect(MLMultiArrayDataType.float16.rawValue == 65552)
        #expect(MLMultiArrayDataType.int32.rawValue == 131104)
        #expect(MLMultiArrayDataType.int8.rawValue == 131080)
        #expect(MLMultiArrayDataType(rawValue: 131104) == .int32)
        #expect(MLMultiArrayDataType(rawValue: 1) == nil)
    }

    @Test("every scalar type names its data type")
    func scalarDataTypes() {
        #expect(Double.multiArrayDataType == .double)
        #expect(Float.multiArrayDataType == .float32)
        #expect(Float16.multiArrayDataType == .float16)
        #expect(Int32.multiArrayDataType == .int32)
        #expect(Int8.multiArrayDataType == .int8)
    }

    @Test("seed usage: scalars round-trip through init(scalars:shape:)")
    func seedUsage() {
        let arr: [Float] = [0.5, 1.5, 2.5]
        #expect(MLShapedArray<Float>(scalars: arr, shape: [arr.count]).scalars == arr)
    }

    func checkBasics<T: MLShapedArrayScalar>(_: T.Type, _ values: [T]) {
        let m = MLShapedArray<T>(scalars: values, shape: [2, 3])
        #expect(m.shape == [2, 3])
        #expect(m.strides == [3, 1])
        #expect(m.count == 2)
        #expect(m.scalarCount == 6)
        #expect(!m.isScalar)
        #expect(m.scalar == nil)
        #expect(m.scalars == values)
        #expect(m[scalarAt: 1, 2] == values[5])
        #expect(m[scalarAt: [0, 1]] == values[1])
        #expect(m[1].scalars == Array(values[3...]))
        #expect(m.transposed().scalars == [values[0], values[3], values[1], values[4], values[2], values[5]])
        let data = values.withUnsafeBytes { Data($0) }
        #expect(MLShapedArray<T>(data: data, shape: [2, 3]) == m)
        let lazy = MLShapedArray<T>(scalars: values.lazy.map { $0 }, shape: [3, 2])
        #expect(lazy.scalars == values)
        #expect(MLShapedArray<T>(repeating: values[2], shape: [2, 2]).scalars == Array(repeating: values[2], count: 4))
    }

    @Test("every conforming scalar type stores, reads and transposes")
    func everyScalarType() {
        checkBasics(Double.self, [1, 2, 3, 4, 5, 6])
        checkBasics(Float.self, [1.5, -2, 3, 4, 5, 6.25])
        checkBasics(Float16.self, [1, 2, 3, 4, 5, 0.5])
        checkBasics(Int32.self, [1, -2, 3, 4, 5, Int32.max])
        checkBasics(Int8.self, [1, -2, 3, 4, 5, Int8.min])
    }

    @Test("rank 0 holds one scalar")
    func rankZero() {
        var s = MLShapedArray<Float>(scalar: 3.5)
        #expect(s.isScalar)
        #expect(s.shape == [])
        #expect(s.strides == [])
        #expect(s.scalarCount == 1)
        #expect(s.count == 0)
        #expect(s.scalar == 3.5)
        #expect(s[scalarAt: []] == 3.5)
        s.scalar = 4
        #expect(s.scalars == [4])
        #expect(s.description == "4.0")
        #expect(s.reshaped(to: [1, 1]).scalars == [4])
        #expect(MLShapedArray<Float>(scalars: [7], shape: [1, 1]).squeezingShape().isScalar)
    }

    @Test("zero-size shapes have no scalars")
    func zeroSize() {
        let e = MLShapedArray<Int32>(scalars: [], shape: [2, 0, 3])
        #expect(e.scalarCount == 0)
        #expect(e.count == 2)
        #expect(e.scalars == [])
        #expect(e[1].shape == [0, 3])
        #expect(e.transposed().shape == [3, 0, 2])
        #expect(e.reshaped(to: [0]).scalars == [])
        let empty = MLShapedArray<Float>(repeating: 1, shape: [0])
        #expect(empty.isEmpty)
        #expect(empty.description == "[]")
        var copy = e
        copy.fill(with: 3)
        #expect(copy == e)
    }

    @Test("literal, identity and unsafe-uninitialized initializers")
    func otherInitializers() {
        let v: MLShapedArray<Float> = [1, 2, 3]
        #expect(v.shape == [3])
        #expect(v.scalars == [1, 2, 3])
        #expect(MLShapedArray<Int32>(identityMatrixOfSize: 3).scalars == [1, 0, 0, 0, 1, 0, 0, 0, 1])
        let squares = MLShapedArray<Int32>(unsafeUninitializedShape: [2, 2]) { buffer, strides in
            #expect(strides == [2, 1])
            for i in 0..<4 { buffer[i] = Int32(i * i) }
        }
        #expect(squares.scalars == [0, 1, 4, 9])
    }

    @Test("concatenation follows numpy.concatenate")
    func concatenation() {
        let a = MLShapedArray<Float>(scalars: [1, 2, 3, 4], shape: [2, 2])
        let b = MLShapedArray<Float>(scalars: [5, 6], shape: [1, 2])
        // np.concatenate([a, b], 0) -> [[1, 2], [3, 4], [5, 6]]
        let rows = MLShapedArray(concatenating: [a, b], alongAxis: 0)
        #expect(rows.shape == [3, 2])
        #expect(rows.scalars == [1, 2, 3, 4, 5, 6])
        // np.concatenate([a, a.T], axis=-1) -> [[1, 2, 1, 3], [3, 4, 2, 4]]
        let columns = MLShapedArray(concatenating: [a, a.transposed()], alongAxis: -1)
        #expect(columns.shape == [2, 4])
        #expect(columns.scalars == [1, 2, 1, 3, 3, 4, 2, 4])
    }

    @Test("reshape, expand, squeeze and transpose follow NumPy")
    func shapeOperations() {
        let x = MLShapedArray<Int32>(scalars: (0..<24).map(Int32.init), shape: [2, 3, 4])
        // np.arange(24).reshape(2,3,4).transpose(2,0,1)[1, 1, 2] == 21 ; .ravel()[:6] == [0, 4, 8, 12, 16, 20]
        let p = x.transposed(permutation: [2, 0, 1])
        #expect(p.shape == [4, 2, 3])
        #expect(p.strides == [1, 12, 4])
        #expect(p[scalarAt: 1, 1, 2] == 21)
        #expect(Array(p.scalars.prefix(6)) == [0, 4, 8, 12, 16, 20])
        // x.T.shape == (4, 3, 2); x.T[3, 2, 1] == 23; x.T.ravel()[:4] == [0, 12, 4, 16]
        let t = x.transposed()
        #expect(t.shape == [4, 3, 2])
        #expect(t[scalarAt: 3, 2, 1] == 23)
        #expect(Array(t.scalars.prefix(4)) == [0, 12, 4, 16])
        // Reshaping a transposed view reads in C order: x.T.reshape(6, 4)[1] == [8, 20, 1, 13]
        #expect(t.reshaped(to: [6, 4])[1].scalars == [8, 20, 1, 13])
        #expect(x.expandingShape(at: 1).shape == [2, 1, 3, 4])
        #expect(x.expandingShape(at: -1).shape == [2, 3, 4, 1])
        #expect(x.expandingShape(at: 0).squeezingShape() == x)
        #expect(x.reshaped(to: [4, 6])[scalarAt: 2, 1] == 13)
    }

    @Test("slices by index, leading indices and ranges")
    func slicing() {
        let m = MLShapedArray<Float>(scalars: (0..<12).map(Float.init), shape: [3, 4])
        #expect(m[[1]].scalars == [4, 5, 6, 7])
        #expect(m[[2, 3]].isScalar)
        #expect(m[[2, 3]].scalar == 11)
        let block = m[[1..<3, 1..<3]]
        #expect(block.shape == [2, 2])
        #expect(block.scalars == [5, 6, 9, 10])
        let rows = m[1..<3]
        #expect(rows.shape == [2, 4])
        #expect(rows.startIndex == 0)
        #expect(rows[0].scalars == [4, 5, 6, 7])
        let mixed = m[1..., ..<2]
        #expect(mixed.scalars == [4, 5, 8, 9])
        #expect(m[0...1, 3...].scalars == [3, 7])
        #expect(m[...].scalars == m.scalars)
        #expect(Array(m.map { $0[scalarAt: 0] }) == [0, 4, 8])
        #expect(m.reversed().map { $0[scalarAt: 0] } == [8, 4, 0])
        #expect(m.last?.scalars == [8, 9, 10, 11])
        // A slice of a slice of a transposed view.
        #expect(m.transposed()[2][1..<3].scalars == [6, 10])
    }
}
