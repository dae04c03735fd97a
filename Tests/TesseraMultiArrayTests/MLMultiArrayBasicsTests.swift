import Foundation
import TesseraMultiArray
import TesseraTensor
import Testing

@Suite("MLMultiArray basics")
struct MLMultiArrayBasicsTests {
    @Test("data types have Core ML's raw values and aliases")
    func rawValues() {
        #expect(MLMultiArrayDataType.double.rawValue == 0x10000 | 64)
        #expect(MLMultiArrayDataType.float32.rawValue == 0x10000 | 32)
        #expect(MLMultiArrayDataType.float16.rawValue == 0x10000 | 16)
        #expect(MLMultiArrayDataType.int32.rawValue == 0x20000 | 32)
        #expect(MLMultiArrayDataType.int8.rawValue == 0x20000 | 8)
        #expect(MLMultiArrayDataType.float64 == .double)
        #expect(MLMultiArrayDataType.float == .float32)
        // A data type Core ML does not define (8-bit float) is not constructible.
        #expect(MLMultiArrayDataType(rawValue: 0x10000 | 8) == nil)
    }

    @Test("init(shape:dataType:) is contiguous, row-major and zero-filled")
    func shapeInit() throws {
        let a = try MLMultiArray(shape: [2, 3, 4], dataType: .float32)
        #expect(a.shape == [2, 3, 4])
        #expect(a.strides == [12, 4, 1])
        #expect(a.count == 24)
        #expect(a.dataType == .float32)
        #expect(logicalValues(a) == [Double](repeating: 0, count: 24))
        let dims = [1, 3, 8, 8]
        let b = try MLMultiArray(shape: dims.map { NSNumber(value: $0) }, dataType: .int8)
        #expect(b.count == 192 && b.strides == [192, 64, 8, 1])
        let empty = try MLMultiArray(shape: [0, 5], dataType: .double)
        #expect(empty.count == 0)
        #expect(empty.withUnsafeBytes { $0.count } == 0)
    }

    @Test("init(shape:dataType:strides:) allocates the padded span")
    func stridedInit() {
        let a = MLMultiArray(shape: [2, 3], dataType: .float16, strides: [8, 1])
        #expect(a.strides == [8, 1])
        #expect(a.withUnsafeBytes { $0.count } == (8 + 3) * 2)
        a[[1, 2] as [NSNumber]] = 1.5
        #expect(a[10].floatValue == 1.5)
    }

    @Test("collection initializers give one-dimensional float32, double and int32 arrays")
    func collectionInits() throws {
        let f = try MLMultiArray([1.41, 1.73] as [Float])
        #expect(
            f.dataType == .float32 && f.shape == [2] && logicalValues(f) == [Double(Float(1.41)), Double(Float(1.73))])
        let d = try MLMultiArray([0.1, 0.2] as [Double])
        #expect(d.dataType == .double && logicalValues(d) == [0.1, 0.2])
        let i = try MLMultiArray([101, 2023, -102])
        #expect(i.dataType == .int32 && logicalValues(i) == [101, 2023, -102])
        let bytes = try MLMultiArray([1, 2, 3] as [UInt8])
        #expect(bytes.dataType == .int32 && logicalValues(bytes) == [1, 2, 3])
        let slice = try MLMultiArray(([1, 2, 3, 4] as [Float])[1...])
        #expect(logicalValues(slice) == [2, 3, 4])
    }

    @Test("the Int subscript is a linear memory offset, as Core ML documents")
    func linearSubscript() throws {
        let (transposed, _) = try makeMultiArray(.transposed, .float32)
        // Offset 13 is memory position 13 whatever the logical order.
        #expect(transposed[13].doubleValue == memoryValue(13))
        let a = try MLMultiArray(shape: [5, 22, 17], dataType: .double)
        let strides = a.strides.map(\.intValue)
        let linear = 3 * strides[0] + 5 * strides[1] + 7 * strides[2]
        a[linear] = 3.14159
        #expect(a[[3, 5, 7] as [NSNumber]].doubleValue == 3.14159)
    }

    @Test("NSNumber subscripts convert like NSNumber's accessors", arguments: allDataTypes)
    func numberSubscripts(_ dataType: MLMultiArrayDataType) throws {
        let a = try MLMultiArray(shape: [2, 2], dataType: dataType)
        a[[1, 0] as [NSNumber]] = 42
        a[3] = NSNumber(value: -7.75)
        let expected3: Double = dataType == .int32 || dataType == .int8 ? -7 : -7.75
        #expect(logicalValues(a) == [0, 0, 42, expected3])
        #expect(a[2].intValue == 42)
        #expect(a[[1, 1] as [NSNumber]].doubleValue == expected3)
    }

    @Test("typed buffer access reads and writes through the strides")
    func bufferAccess() throws {
        let (a, expected) = try makeMultiArray(.padded, .int32)
        let strides = a.strides.map(\.intValue)
        let read = a.withUnsafeBufferPointer(ofType: Int32.self) { buffer in
            var values: [Double] = []
            forEachIndex([2, 3, 4]) { i in values.append(Double(buffer[zip(i, strides).map(*).reduce(0, +)])) }
            return values
        }
        #expect(read == expected)
        a.withUnsafeMutableBufferPointer(ofType: Int32.self) { buffer, strides in
            buffer[1 * strides[0] + 2 * strides[1] + 3 * strides[2]] = 1234
        }
        #expect(a[[1, 2, 3] as [NSNumber]].int32Value == 1234)
        let bytes = a.withUnsafeMutableBytes { bytes, strides in
            bytes.storeBytes(of: 99, toByteOffset: strides[1] * 4, as: Int32.self)
            return bytes.count
        }
        #expect(bytes == (17 + 2 * 5 + 3 + 1) * 4)
        #expect(a[[0, 1, 0] as [NSNumber]].int32Value == 99)
    }

    @Test("a readable description")
    func description() throws {
        let a = try MLMultiArray([0.5, 1, 1.5] as [Float])
        #expect(a.description == "Float32 3 array [0.5, 1.0, 1.5]")
        let (t, _) = try makeMultiArray(.transposed, .int8)
        #expect(t.description.hasPrefix("Int8 4 × 3 × 2 array (strides [1, 4, 12]) [-60, -48, -56, -44"))
        let long = try MLMultiArray(shape: [100], dataType: .int32)
        #expect(long.description.hasSuffix("0, 0, …]"))
    }

    @Test("identity equality, as NSObject's")
    func identity() throws {
        let a = try MLMultiArray([1] as [Float])
        let b = try MLMultiArray([1] as [Float])
        #expect(a == a && a != b)
        #expect(Set([a, a, b]).count == 2)
    }
}
