import Foundation
import TesseraKernels
import Testing

@testable import TesseraTensor

/// Strided storage, copy-on-write, writes through subscripts and slices, the zero-copy bridge.
@Suite("MLShapedArray storage")
struct ShapedArrayStorageTests {
    /// The address of element `[0, 0, …]`.
    func address<A: MLShapedArrayProtocol>(_ a: A) -> UnsafeRawPointer? {
        a.withUnsafeShapedBufferPointer { buffer, _, _ in buffer.baseAddress.map(UnsafeRawPointer.init) }
    }

    @Test("padded strides from bytesNoCopy are read through scalars and subscripts")
    func paddedStrides() {
        // A 2 × 3 matrix stored in rows of 4 (one padding element per row).
        let p = UnsafeMutablePointer<Float>.allocate(capacity: 8)
        p.initialize(from: [1, 2, 3, -1, 4, 5, 6, -1], count: 8)
        let released = LockedFlag()
        let m = MLShapedArray<Float>(
            bytesNoCopy: p, shape: [2, 3], strides: [4, 1],
            deallocator: .custom { pointer, byteCount in
                #expect(byteCount == 7 * 4)
                pointer.deallocate()
                released.set()
            })
        #expect(m.strides == [4, 1])
        #expect(m.scalars == [1, 2, 3, 4, 5, 6])
        #expect(m[scalarAt: 1, 2] == 6)
        #expect(m[1].scalars == [4, 5, 6])
        #expect(m.transposed().scalars == [1, 4, 2, 5, 3, 6])
        #expect(m.reshaped(to: [3, 2]).scalars == [1, 2, 3, 4, 5, 6])
        #expect(m.description == "[[1.0, 2.0, 3.0],\n [4.0, 5.0, 6.0]]")
        m.withUnsafeShapedBufferPointer { buffer, shape, strides in
            #expect(buffer.count == 7)
            #expect(shape == [2, 3] && strides == [4, 1])
            #expect(buffer[1 * 4 + 2] == 6)
        }
        // Mutation copies out of the caller's memory, which stays untouched.
        var copy = m
        copy[scalarAt: 0, 0] = 100
        #expect(copy.strides == [3, 1])
        #expect(copy.scalars == [100, 2, 3, 4, 5, 6])
        #expect(p[0] == 1)
        #expect(!released.isSet)
        _ = consume copy
        _ = consume m
        #expect(released.isSet)
    }

    @Test("column-major data and stride-0 broadcast storage")
    func columnMajorAndBroadcast() {
        let data = [Int8(1), 4, 2, 5, 3, 6].withUnsafeBytes { Data($0) }
        let m = MLShapedArray<Int8>(data: data, shape: [2, 3], strides: [1, 2])
        #expect(m.scalars == [1, 2, 3, 4, 5, 6])
        #expect(m[scalarAt: 1, 0] == 4)
        var value: Double = 2.5
        let b = withUnsafePointer(to: &value) { pointer in
            MLShapedArray<Double>(bytesNoCopy: pointer, shape: [2, 3], strides: [0, 0], deallocator: .none).scalars
        }
        #expect(b == Array(repeating: 2.5, count: 6))
    }

    @Test("copies are independent; unique mutation writes in place")
    func copyOnWrite() {
        var a = MLShapedArray<Float>(scalars: [1, 2, 3, 4], shape: [2, 2])
        let before = address(a)
        a[scalarAt: 0, 0] = 10
        a.fill(with: 7)
        a.scalars = [5, 6, 7, 8]
        a.withUnsafeMutableShapedBufferPointer { buffer, _, _ in buffer[3] = 9 }
        #expect(address(a) == before, "mutating a uniquely held array must not copy")
        let b = a
        #expect(address(b) == address(a))
        a[scalarAt: 1, 1] = 0
        #expect(address(a) != before)
        #expect(a.scalars == [5, 6, 7, 0])
        #expect(b.scalars == [5, 6, 7, 9])
        var c = b
        c.fill(with: 1)
        c[1] = b[0]
        #expect(c.scalars == [1, 1, 5, 6])
        #expect(b.scalars == [5, 6, 7, 9])
    }

    @Test("writes through a transposed view land at the view's positions")
    func stridedWrites() {
        let m = MLShapedArray<Int32>(scalars: [1, 2, 3, 4, 5, 6], shape: [2, 3])
        var t = m.transposed()
        t[scalarAt: 2, 0] = 30
        #expect(t.scalars == [1, 4, 2, 5, 30, 6])
        #expect(m.scalars == [1, 2, 3, 4, 5, 6])
        var unique = MLShapedArray<Int32>(scalars: [1, 2, 3, 4, 5, 6], shape: [2, 3]).transposed()
        let before = address(unique)
        unique[scalarAt: 2, 1] = 60
        unique.scalars = [10, 40, 20, 50, 30, 60]
        #expect(address(unique) == before, "a uniquely held strided view writes in place")
        #expect(unique.strides == [1, 3])
        #expect(unique.transposed().scalars == [10, 20, 30, 40, 50, 60])
    }

    @Test("slices: get shares memory, set copies into the array, mutation never leaks")
    func sliceGetSet() {
        var m = MLShapedArray<Float>(scalars: (0..<6).map(Float.init), shape: [2, 3])
        var row = m[0]
        #expect(address(row) == address(m))
        row[scalarAt: 0] = 9
        #expect(m.scalars == [0, 1, 2, 3, 4, 5])
        m[1] = row
        #expect(m.scalars == [0, 1, 2, 9, 1, 2])
        m[0][scalarAt: 2] = 7
        #expect(m.scalars == [0, 1, 7, 9, 1, 2])
        m[[0..<2, 1..<2]] = MLShapedArraySlice(scalars: [-1, -2], shape: [2, 1])
        #expect(m.scalars == [0, -1, 7, 9, -2, 2])
        m[1..., 2...] = MLShapedArraySlice(scalar: 42).reshaped(to: [1, 1])
        #expect(m[scalarAt: 1, 2] == 42)
        m[[1]] = MLShapedArraySlice(repeating: 3, shape: [3])
        #expect(m[1].scalars == [3, 3, 3])
        m[0..<1] = m[1..<2]
        #expect(m.scalars == [3, 3, 3, 3, 3, 3])
        m.swapAt(0, 1)
        var slice = m[...]
        slice.fill(with: 0)
        #expect(m.scalars == [3, 3, 3, 3, 3, 3])
        #expect(MLShapedArray(slice).scalars == [0, 0, 0, 0, 0, 0])
    }

    @Test("Codable round trip and decoding errors")
    func codable() throws {
        let m = MLShapedArray<Float16>(scalars: [1, 2, 3, 4, 5, 6], shape: [3, 2]).transposed()
        let json = try JSONEncoder().encode(m)
        let back = try JSONDecoder().decode(MLShapedArray<Float16>.self, from: json)
        #expect(back == m)
        #expect(back.shape == [2, 3])
        let text = #"{"shape":[2],"scalars":[1,2]}"#
        #expect(try JSONDecoder().decode(MLShapedArray<Int32>.self, from: Data(text.utf8)).scalars == [1, 2])
        for bad in [#"{"shape":[3],"scalars":[1,2]}"#, #"{"shape":[-1],"scalars":[]}"#] {
            #expect(throws: DecodingError.self) {
                try JSONDecoder().decode(MLShapedArray<Int32>.self, from: Data(bad.utf8))
            }
        }
        let slice = try JSONDecoder().decode(MLShapedArraySlice<Double>.self, from: JSONEncoder().encode(m[1]))
        #expect(slice.scalars == [2, 4, 6])
    }

    @Test("description prints NumPy-style nested brackets")
    func description() {
        #expect(MLShapedArray<Int32>(scalars: [1, 2, 3], shape: [3]).description == "[1, 2, 3]")
        let cube = MLShapedArray<Int8>(scalars: (0..<8).map(Int8.init), shape: [2, 2, 2])
        #expect(cube.description == "[[[0, 1],\n  [2, 3]],\n\n [[4, 5],\n  [6, 7]]]")
        #expect(MLShapedArray<Float>(repeating: 0, shape: [2, 0]).description == "[[],\n []]")
        #expect("\(cube[1])" == "[[4, 5],\n [6, 7]]")
    }

    @Test("many tasks read one array")
    func concurrentReads() async {
        let m = MLShapedArray<Float>(scalars: (0..<4096).map(Float.init), shape: [64, 64])
        let expected = (0..<4096).reduce(Float(0)) { $0 + Float($1) }
        let sums = await withTaskGroup(of: Float.self) { group in
            for task in 0..<32 {
                group.addTask {
                    var copy = task.isMultiple(of: 2) ? m : m.transposed().transposed()
                    copy[scalarAt: 0, 0] = 0  // each task's copy is its own
                    return copy.scalars.reduce(0, +) + m[task][scalarAt: 0] * 0
                }
            }
            return await group.reduce(into: [Float]()) { $0.append($1) }
        }
        #expect(sums.count == 32)
        #expect(sums.allSatisfy { $0 == expected })
        #expect(m[scalarAt: 0, 1] == 1)
    }

    @Test("the Tessera bridge exposes and adopts memory without copying")
    func zeroCopyBridge() {
        let buffer = AlignedBuffer(unpooledByteCount: 6 * MemoryLayout<Float>.stride)
        let floats = buffer.typedPointer(Float.self)
        for i in 0..<6 { floats[i] = Float(i) }
        let layout = StridedLayout(contiguous: [3, 2]).permuted([1, 0])
        let m = MLShapedArray<Float>(_adopting: buffer, layout: layout)
        #expect(m.shape == [2, 3])
        #expect(m.scalars == [0, 2, 4, 1, 3, 5])
        let storage = m._storage
        #expect(storage.pointer == UnsafeRawPointer(buffer.pointer))
        #expect(storage.layout == layout)
        #expect(m[1]._storage.layout.offset == 1)
    }
}

/// A flag set from a deallocator, read by the test.
final class LockedFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    func set() { lock.withLock { value = true } }
    var isSet: Bool { lock.withLock { value } }
}
