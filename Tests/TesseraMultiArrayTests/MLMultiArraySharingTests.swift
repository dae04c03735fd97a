import Foundation
import TesseraMultiArray
import TesseraTensor
import Testing

/// Shaped arrays and tensors made from a multi-array share its memory, and keep their values
/// when the multi-array is written afterwards.
@Suite("MLMultiArray sharing")
struct MLMultiArraySharingTests {
    @Test("writing a multi-array after sharing moves it to its own copy; readers keep their values")
    func copyBeforeWrite() async throws {
        let a = try MLMultiArray([1, 2, 3, 4] as [Float])
        let before = baseAddress(a)
        let shaped = MLShapedArray<Float>(a)
        let tensor = MLTensor(a)
        #expect(baseAddress(shaped) == before)
        a[0] = 100
        #expect(baseAddress(a) != before)
        #expect(a[0].floatValue == 100)
        #expect(shaped.scalars == [1, 2, 3, 4])
        #expect(await tensor.shapedArray(of: Float.self).scalars == [1, 2, 3, 4])
        // Once nothing shares it, the array writes in place.
        let now = baseAddress(a)
        a[1] = 200
        #expect(baseAddress(a) == now)
    }

    @Test(
        "every write path copies first while shared",
        arguments: ["subscript", "key", "bytes", "buffer", "pointer", "transfer"])
    func everyWritePath(_ path: String) throws {
        let a = try MLMultiArray([1, 2, 3] as [Float])
        let shaped = MLShapedArray<Float>(a)
        switch path {
        case "subscript": a[0] = 9
        case "key": a[[0] as [NSNumber]] = 9
        case "bytes": a.withUnsafeMutableBytes { bytes, _ in bytes.storeBytes(of: 9, as: Float.self) }
        case "buffer": a.withUnsafeMutableBufferPointer(ofType: Float.self) { buffer, _ in buffer[0] = 9 }
        case "pointer": a.dataPointer.storeBytes(of: 9, as: Float.self)
        default: try MLMultiArray([9, 2, 3] as [Float]).transfer(to: a)
        }
        #expect(a[0].floatValue == 9)
        #expect(shaped.scalars == [1, 2, 3])
    }

    @Test("a multi-array over a shaped array's memory never writes it")
    func borrowedIsReadOnly() {
        let shaped = MLShapedArray<Int32>(scalars: [1, 2, 3], shape: [3])
        let a = MLMultiArray(shaped)
        #expect(baseAddress(a) == baseAddress(shaped))
        a[2] = 30
        #expect(shaped.scalars == [1, 2, 3])
        #expect(logicalValues(a) == [1, 2, 30])
    }

    @Test("mutating a shaped array after a multi-array borrowed it leaves the multi-array alone")
    func borrowerKeepsValues() {
        var shaped = MLShapedArray<Int32>(scalars: [1, 2, 3], shape: [3])
        let a = MLMultiArray(shaped)
        shaped[scalarAt: 0] = 10
        #expect(logicalValues(a) == [1, 2, 3])
        #expect(shaped.scalars == [10, 2, 3])
    }

    @Test("mutating a shaped array made from a multi-array leaves the multi-array alone")
    func shapedArrayCopiesOnWrite() throws {
        let a = try MLMultiArray([1, 2, 3] as [Float])
        var shaped = MLShapedArray<Float>(a)
        shaped[scalarAt: 0] = 50
        #expect(logicalValues(a) == [1, 2, 3])
        #expect(shaped.scalars == [50, 2, 3])
    }

    @Test("caller memory is written in place, and the deallocator runs once when the last user lets go")
    func wrappedMemory() throws {
        final class Flag: @unchecked Sendable { var calls = 0 }
        let flag = Flag()
        let raw = UnsafeMutableRawPointer.allocate(byteCount: 16, alignment: 16)
        raw.initializeMemory(as: Float.self, repeating: 0, count: 4)
        var shaped: MLShapedArray<Float>?
        do {
            let a = try MLMultiArray(dataPointer: raw, shape: [4], dataType: .float32, strides: [1]) {
                flag.calls += 1
                $0.deallocate()
            }
            a[1] = 5
            #expect(raw.load(fromByteOffset: 4, as: Float.self) == 5)
            #expect(a.dataPointer == raw)
            shaped = MLShapedArray<Float>(a)
        }
        #expect(flag.calls == 0)
        #expect(shaped?.scalars == [0, 5, 0, 0])
        shaped = nil
        #expect(flag.calls == 1)
    }

    @Test("zero copy from a multi-array to a tensor and back, by pointer identity")
    func tensorRoundTripIdentity() async throws {
        let a = try MLMultiArray(shape: [1, 80, 300], dataType: .float32)
        let tensor = MLTensor(a)
        let shaped = await tensor.shapedArray(of: Float.self)
        #expect(baseAddress(shaped) == baseAddress(a))
        let back = await tensor.multiArray()
        #expect(baseAddress(back) == baseAddress(a))
        let viaShaped = MLMultiArray(shaped)
        #expect(baseAddress(viaShaped) == baseAddress(a))
    }

    @Test("a computed tensor exports without a copy")
    func exportIdentity() async {
        let x = MLTensor(shape: [4, 5], scalars: (0..<20).map(Float.init)) * 2
        let shaped = await x.shapedArray(of: Float.self)
        let exported = MLMultiArray(shaped)
        #expect(baseAddress(exported) == baseAddress(shaped))
        #expect(logicalValues(exported) == (0..<20).map { Double($0 * 2) })
    }
}
