import TesseraKernels
import _TesseraTestSupport

/// Reads `count` elements of `type` at `raw` as `Double`s.
func readDoubles(_ raw: UnsafeRawPointer, count: Int, type: KernelScalarType) -> [Double] {
    func read<T: KernelScalar>(_: T.Type) -> [Double] {
        (0..<count).map { raw.load(fromByteOffset: $0 * MemoryLayout<T>.stride, as: T.self).kernelDoubleValue }
    }
    switch type {
    case .float32: return read(Float.self)
    case .float16: return read(Float16.self)
    case .float64: return read(Double.self)
    case .int32: return read(Int32.self)
    case .int16: return read(Int16.self)
    case .int8: return read(Int8.self)
    case .uint32: return read(UInt32.self)
    case .uint16: return read(UInt16.self)
    case .uint8: return read(UInt8.self)
    case .bool: return read(Bool.self)
    }
}

/// Random test values of `T`: small integers for integer types, `-1...1` for floats, 0/1 for
/// bool.
func randomValues<T: KernelScalar>(_: T.Type, count: Int, rng: inout SeededRandom) -> [T] {
    let type = T.kernelScalarType
    return (0..<count).map { _ in
        if type.isFloatingPoint { return T(kernelDoubleValue: Double.random(in: -1...1, using: &rng)) }
        if type == .bool { return T(kernelDoubleValue: Double(Int.random(in: 0...1, using: &rng))) }
        let range = type.isSigned ? -50...50 : 0...100
        return T(kernelDoubleValue: Double(Int.random(in: range, using: &rng)))
    }
}

/// Runs the reduce kernel on a test operand and returns the output as `Double`s.
func runReduce<T: KernelScalar>(
    _ op: ReductionOp, _ operand: StridedStorage<T>, axes: [Int], outputType: KernelScalarType? = nil
) -> [Double] {
    let outType = outputType ?? op.outputType(for: T.kernelScalarType) ?? .float32
    var outShape = operand.layout.shape
    for axis in axes { outShape[axis] = 1 }
    let count = outShape.reduce(1, *)
    let raw = UnsafeMutableRawPointer.allocate(byteCount: Swift.max(1, count * outType.byteCount), alignment: 64)
    defer { raw.deallocate() }
    operand.storage.withUnsafeBytes { input in
        ReductionKernels.reduce(
            op, input: input.baseAddress!, layout: operand.layout, type: T.kernelScalarType, axes: axes,
            output: raw, outputType: outType)
    }
    return readDoubles(raw, count: count, type: outType)
}

/// The naive reference for `op`, rounded (or wrapped) to the output type the kernel uses.
func expectedReduce<T: KernelScalar>(
    _ op: ReductionOp, _ operand: StridedStorage<T>, axes: [Int], outputType: KernelScalarType? = nil
) -> [Double] {
    let raw = NaiveReduction.reduce(op, operand.storage.map(\.kernelDoubleValue), operand.layout, axes: axes)
    switch op {
    case .sum, .product, .max, .min:
        return raw.map { T(kernelDoubleValue: $0).kernelDoubleValue }
    case .mean where outputType == .float32 || T.kernelScalarType == .float32:
        return raw.map { Double(Float($0)) }
    case .mean where T.kernelScalarType == .float16:
        return raw.map { Double(Float16(Float($0))) }
    default:
        return raw
    }
}

/// Every subset of `0..<rank`.
func axisSubsets(rank: Int) -> [[Int]] {
    (0..<(1 << rank)).map { mask in (0..<rank).filter { mask & (1 << $0) != 0 } }
}
