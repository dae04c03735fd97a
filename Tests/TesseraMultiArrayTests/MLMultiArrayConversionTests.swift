import Foundation
import TesseraMultiArray
import TesseraTensor
import Testing

/// `MLShapedArray(multiArray)` for the multi-array's own type: values, shape, strides, and the
/// address of its first element.
private func sharedShapedArray(_ array: MLMultiArray) -> (values: [Double], strides: [Int], base: UnsafeRawPointer?) {
    func read<S: MLShapedArrayScalar & BinaryFloatingPoint>(_: S.Type) -> ([Double], [Int], UnsafeRawPointer?) {
        let s = MLShapedArray<S>(array)
        return (s.scalars.map { Double($0) }, s.strides, baseAddress(s))
    }
    func read<S: MLShapedArrayScalar & BinaryInteger>(_: S.Type) -> ([Double], [Int], UnsafeRawPointer?) {
        let s = MLShapedArray<S>(array)
        return (s.scalars.map { Double($0) }, s.strides, baseAddress(s))
    }
    switch array.dataType {
    case .double: return read(Double.self)
    case .float32: return read(Float.self)
    case .float16: return read(Float16.self)
    case .int32: return read(Int32.self)
    case .int8: return read(Int8.self)
    }
}

/// A shaped array of the multi-array's type made from `values`, turned into a multi-array.
private func multiArrayFromShapedArray(_ values: [Double], shape: [Int], _ dataType: MLMultiArrayDataType) -> (
    MLMultiArray, UnsafeRawPointer?
) {
    func make<S: MLShapedArrayScalar>(_ convert: (Double) -> S) -> (MLMultiArray, UnsafeRawPointer?) {
        let s = MLShapedArray<S>(scalars: values.map(convert), shape: shape)
        return (MLMultiArray(s), baseAddress(s))
    }
    switch dataType {
    case .double: return make { $0 }
    case .float32: return make { Float($0) }
    case .float16: return make { Float16($0) }
    case .int32: return make { Int32($0) }
    case .int8: return make { Int8($0) }
    }
}

@Suite("MLMultiArray conversions")
struct MLMultiArrayConversionTests {
    @Test("MLShapedArray(multiArray) reads every layout in row-major order without copying", arguments: typesAndLayouts)
    func toShapedArray(_ dataType: MLMultiArrayDataType, _ kind: LayoutKind) throws {
        let (array, expected) = try makeMultiArray(kind, dataType)
        let shared = sharedShapedArray(array)
        #expect(shared.values == expected)
        #expect(shared.strides == kind.strides)
        #expect(shared.base == baseAddress(array))
    }

    @Test("MLShapedArray(converting:) gives contiguous Float, Double, Float16, Int32, Int8", arguments: typesAndLayouts)
    func converting(_ dataType: MLMultiArrayDataType, _ kind: LayoutKind) throws {
        let (array, expected) = try makeMultiArray(kind, dataType)
        let floats = MLShapedArray<Float>(converting: array)
        #expect(floats.scalars == expected.map { Float($0) })
        #expect(floats.strides == MLShapedArray<Float>(repeating: 0, shape: kind.shape).strides)
        #expect(MLShapedArray<Double>(converting: array).scalars == expected)
        #expect(MLShapedArray<Float16>(converting: array).scalars == expected.map { Float16($0) })
        #expect(MLShapedArray<Int32>(converting: array).scalars == expected.map { Int32($0) })
        #expect(MLShapedArray<Int8>(converting: array).scalars == expected.map { Int8($0) })
        // A converted copy is fresh memory.
        #expect(baseAddress(floats) != baseAddress(array))
    }

    @Test("MLMultiArray(shapedArray) shares the memory and round-trips", arguments: allDataTypes)
    func fromShapedArray(_ dataType: MLMultiArrayDataType) throws {
        let values = (0..<24).map(memoryValue)
        let (array, shapedBase) = multiArrayFromShapedArray(values, shape: [2, 3, 4], dataType)
        #expect(array.dataType == dataType)
        #expect(array.shape == [2, 3, 4])
        #expect(array.strides == [12, 4, 1])
        #expect(baseAddress(array) == shapedBase)
        #expect(logicalValues(array) == values)
        #expect(sharedShapedArray(array).values == values)
    }

    @Test("a transposed or sliced shaped array becomes a strided multi-array without a copy")
    func stridedShapedArray() throws {
        let m = MLShapedArray<Float>(scalars: (0..<24).map(Float.init), shape: [2, 3, 4])
        let t = m.transposed(permutation: [2, 0, 1])
        let a = MLMultiArray(t)
        #expect(a.shape == [4, 2, 3])
        #expect(a.strides == [1, 12, 4])
        #expect(baseAddress(a) == baseAddress(m))
        #expect(logicalValues(a) == t.scalars.map(Double.init))
        let slice = m[1]
        let b = MLMultiArray(slice)
        #expect(b.shape == [3, 4])
        #expect(logicalValues(b) == (12..<24).map(Double.init))
        #expect(baseAddress(b) == baseAddress(m).map { $0 + 12 * 4 })
    }

    @Test("a broadcast view (stride 0) is copied into contiguous memory")
    func broadcastIsCopied() {
        let row: [Float] = [1, 2, 3]
        let wide = row.withUnsafeBytes { bytes in
            MLShapedArray<Float>(bytesNoCopy: bytes.baseAddress!, shape: [4, 3], strides: [0, 1], deallocator: .none)
                .scalars
        }
        let view = row.withUnsafeBytes { bytes in
            MLMultiArray(
                MLShapedArray<Float>(
                    bytesNoCopy: bytes.baseAddress!, shape: [4, 3], strides: [0, 1], deallocator: .none))
        }
        #expect(view.strides == [3, 1])
        #expect(logicalValues(view) == wide.map(Double.init))
    }

    @Test("MLTensor(multiArray) reads every layout and type without copying", arguments: typesAndLayouts)
    func toTensor(_ dataType: MLMultiArrayDataType, _ kind: LayoutKind) async throws {
        let (array, expected) = try makeMultiArray(kind, dataType)
        let tensor = MLTensor(array)
        #expect(tensor.shape == kind.shape)
        let back = await tensor.multiArray()
        #expect(back.dataType == dataType)
        #expect(baseAddress(back) == baseAddress(array))
        #expect(logicalValues(back) == expected)
        let floats = await tensor.cast(to: Float.self).shapedArray(of: Float.self)
        #expect(floats.scalars == expected.map { Float($0) })
    }

    @Test("tensor.multiArray() converts to a requested data type")
    func tensorExportConverts() async {
        let x = MLTensor(shape: [2, 3], scalars: [0.5, -1.25, 2, 3.75, 65504, 1e-3] as [Float])
        let halves = await x.multiArray(dataType: .float16)
        #expect(halves.dataType == .float16)
        #expect(logicalValues(halves) == [0.5, -1.25, 2, 3.75, 65504, 1e-3].map { Double(Float16(Float($0))) })
        let doubled = synchronousExport(x * 2)
        #expect(logicalValues(doubled) == [1, -2.5, 4, 7.5, 131_008, 2e-3].map { Double(Float($0)) })
        let flags = await (x .> 1).multiArray()
        #expect(flags.dataType == .int32)
        #expect(logicalValues(flags) == [0, 0, 1, 1, 1, 0])
        let transposed = await x.transposed().multiArray()
        #expect(transposed.shape == [3, 2])
        #expect(logicalValues(transposed) == [0.5, 3.75, -1.25, 65504, 2, Double(Float(1e-3))])
    }

    /// In synchronous code Swift picks the blocking overload of `multiArray(dataType:)`.
    private func synchronousExport(_ tensor: MLTensor) -> MLMultiArray { tensor.multiArray() }

    @Test("Float16 ⇄ Float32 conversion matches Swift's own, through transfer(to:), in both directions")
    func float16Conversion() throws {
        let specials: [Float] = [.infinity, -.infinity, 70000, 6e-8, -0.0, 1e-9]
        let floats: [Float] =
            (0..<1000).map { (i: Int) -> Float in Float(i - 500) * 0.37 + Float(i % 7) * 1e-4 } + specials
        let source = try MLMultiArray(floats)
        let halves = try MLMultiArray(shape: [NSNumber(value: floats.count)], dataType: .float16)
        source.transfer(to: halves)
        let expected = floats.map { Float16($0) }
        #expect(MLShapedArray<Float16>(halves).scalars.map(\.bitPattern) == expected.map(\.bitPattern))
        let back = try MLMultiArray(shape: [NSNumber(value: floats.count)], dataType: .float32)
        halves.transfer(to: back)
        #expect(MLShapedArray<Float>(back).scalars == expected.map { Float($0) })
    }

    @Test("all 65,536 halves widen exactly; a sweep of float bit patterns narrows like Float16(_:)")
    func float16Exhaustive() throws {
        let halves = try MLMultiArray(shape: [65536], dataType: .float16)
        halves.withUnsafeMutableBufferPointer(ofType: Float16.self) { buffer, _ in
            for i in 0..<65536 { buffer[i] = Float16(bitPattern: UInt16(i)) }
        }
        let floats = MLShapedArray<Float>(converting: halves).scalars
        var wideMismatches = 0
        for i in 0..<65536 {
            let expected = Float(Float16(bitPattern: UInt16(i)))
            if !(floats[i].bitPattern == expected.bitPattern || (floats[i].isNaN && expected.isNaN)) {
                wideMismatches += 1
            }
        }
        #expect(wideMismatches == 0)
        // Every 3001st float bit pattern (both signs, every exponent) plus the rounding edges.
        var patterns = Array(stride(from: UInt32(0), to: UInt32.max - 3001, by: 3001))
        patterns += [0x3880_0000, 0x3880_1000, 0x3880_2000, 0x3380_0000, 0x477F_E000, 0x477F_EFFF, 0x477F_F000]
        let source = try MLMultiArray(patterns.map { Float(bitPattern: $0) })
        let narrowed = try MLMultiArray(shape: [NSNumber(value: patterns.count)], dataType: .float16)
        source.transfer(to: narrowed)
        let got = MLShapedArray<Float16>(narrowed).scalars
        var mismatches = 0
        for (i, pattern) in patterns.enumerated() {
            let expected = Float16(Float(bitPattern: pattern))
            if !(got[i].bitPattern == expected.bitPattern || (got[i].isNaN && expected.isNaN)) { mismatches += 1 }
        }
        #expect(mismatches == 0)
    }

    @Test(
        "transfer(to:) converts between every pair of types and writes through the destination's strides",
        arguments: typesAndLayouts)
    func transfer(_ dataType: MLMultiArrayDataType, _ kind: LayoutKind) throws {
        let (source, expected) = try makeMultiArray(kind, dataType)
        for target in allDataTypes {
            let contiguous = try MLMultiArray(shape: source.shape, dataType: target)
            source.transfer(to: contiguous)
            #expect(logicalValues(contiguous) == expected, "\(dataType) -> \(target), \(kind)")
            // Padded destination: the padding keeps its sentinel value.
            let shape = kind.shape
            let padded = MLMultiArray(
                shape: shape, dataType: target, strides: [shape[1] * (shape[2] + 2), shape[2] + 2, 1])
            padded.withUnsafeMutableBytes { bytes, _ in
                for i in 0..<(bytes.count / byteCount(target)) {
                    store(-7, target, bytes.baseAddress! + i * byteCount(target))
                }
            }
            source.transfer(to: padded)
            #expect(logicalValues(padded) == expected, "\(dataType) -> padded \(target), \(kind)")
            #expect(load(target, baseAddress(padded)! + shape[2] * byteCount(target)) == -7)
        }
    }
}
