import TesseraKernels
import Testing
import _TesseraTestSupport

/// Runs a cumulative kernel on a test operand and returns the output as `Double`s.
func runScan<T: KernelScalar>(
    _ operand: StridedStorage<T>, axis: Int, product: Bool, exclusive: Bool, reverse: Bool
) -> [Double] {
    let count = operand.layout.count
    let type = T.kernelScalarType
    let raw = UnsafeMutableRawPointer.allocate(byteCount: Swift.max(1, count * type.byteCount), alignment: 64)
    defer { raw.deallocate() }
    operand.storage.withUnsafeBytes { input in
        if product {
            ScanKernels.cumulativeProduct(
                input: input.baseAddress!, layout: operand.layout, type: type, axis: axis, exclusive: exclusive,
                reverse: reverse, output: raw)
        } else {
            ScanKernels.cumulativeSum(
                input: input.baseAddress!, layout: operand.layout, type: type, axis: axis, exclusive: exclusive,
                reverse: reverse, output: raw)
        }
    }
    return readDoubles(raw, count: count, type: type)
}

@Suite("Scans")
struct ScanTests {
    static let modes: [(exclusive: Bool, reverse: Bool)] = [(false, false), (true, false), (false, true), (true, true)]

    @Test("float32 random shapes, every axis and mode", arguments: LayoutKind.allCases, [false, true])
    func randomShapes(kind: LayoutKind, product: Bool) {
        var rng = SeededRandom(seed: 31)
        for rank in 1...4 {
            let shape = rng.shape(rank: rank, sizes: 1...5)
            let values = rng.floats(1024, in: 0.5...1.5)
            let operand = kind.make(shape: shape) { values[$0 % values.count] }
            for axis in 0..<rank {
                for mode in Self.modes {
                    let got = runScan(
                        operand, axis: axis, product: product, exclusive: mode.exclusive, reverse: mode.reverse)
                    let want = NaiveReduction.cumulative(
                        operand.storage.map(Double.init), operand.layout, axis: axis, product: product,
                        exclusive: mode.exclusive, reverse: mode.reverse)
                    let mismatch = firstMismatch(got, want, rtol: 1e-5, atol: 1e-6)
                    #expect(mismatch == nil, "\(kind) \(shape) axis \(axis) \(mode): \(mismatch ?? "")")
                }
            }
        }
    }

    @Test("every numeric type", arguments: KernelScalarType.allCases.filter { $0 != .bool })
    func everyType(type: KernelScalarType) {
        switch type {
        case .float32: checkType(Float.self)
        case .float16: checkType(Float16.self)
        case .float64: checkType(Double.self)
        case .int32: checkType(Int32.self)
        case .int16: checkType(Int16.self)
        case .int8: checkType(Int8.self)
        case .uint32: checkType(UInt32.self)
        case .uint16: checkType(UInt16.self)
        case .uint8: checkType(UInt8.self)
        case .bool: break
        }
    }

    func checkType<T: KernelScalar>(_: T.Type) {
        var rng = SeededRandom(seed: 2)
        let values = randomValues(T.self, count: 200, rng: &rng)
        let small = (0..<200).map { _ in T(kernelDoubleValue: Double(Int.random(in: 1...3, using: &rng))) }
        for kind in LayoutKind.allCases {
            for axis in 0..<3 {
                for product in [false, true] {
                    // Sums may wrap; products use small values so Double stays exact.
                    let operand = kind.make(shape: [2, 3, 4]) { (i: Int) -> T in
                        product ? small[i % 200] : values[i % 200]
                    }
                    for mode in Self.modes {
                        let got = runScan(
                            operand, axis: axis, product: product, exclusive: mode.exclusive, reverse: mode.reverse)
                        let want = NaiveReduction.cumulative(
                            operand.storage.map(\.kernelDoubleValue), operand.layout, axis: axis, product: product,
                            exclusive: mode.exclusive, reverse: mode.reverse
                        ).map { T(kernelDoubleValue: $0).kernelDoubleValue }
                        let mismatch = firstMismatch(
                            got, want, rtol: T.kernelScalarType == .float16 ? 2e-3 : 1e-5, atol: 1e-4)
                        #expect(
                            mismatch == nil, "\(T.kernelScalarType) \(kind) axis \(axis) \(mode): \(mismatch ?? "")")
                    }
                }
            }
        }
    }

    @Test("examples, wrapping, broadcast and zero-size inputs")
    func examples() {
        let x = StridedStorage<Int32>(storage: [1, 2, 3, 4], layout: StridedLayout(contiguous: [4]))
        #expect(runScan(x, axis: 0, product: false, exclusive: false, reverse: false) == [1, 3, 6, 10])
        #expect(runScan(x, axis: -1, product: false, exclusive: true, reverse: true) == [9, 7, 4, 0])
        #expect(runScan(x, axis: 0, product: true, exclusive: true, reverse: false) == [1, 1, 2, 6])
        let bytes = StridedStorage<UInt8>(storage: [200, 100], layout: StridedLayout(contiguous: [2]))
        #expect(runScan(bytes, axis: 0, product: false, exclusive: false, reverse: false) == [200, 44])
        let b = StridedStorage<Float>(
            storage: [1, 2], layout: StridedLayout(contiguous: [2, 1]).broadcast(to: [2, 3]))
        #expect(runScan(b, axis: 1, product: false, exclusive: false, reverse: false) == [1, 2, 3, 2, 4, 6])
        let empty = StridedStorage<Float>(storage: [0], layout: StridedLayout(contiguous: [3, 0]))
        #expect(runScan(empty, axis: 0, product: false, exclusive: false, reverse: false) == [])
    }
}
