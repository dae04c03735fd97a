import TesseraModels
import Testing
import _TesseraTestSupport

@testable import TesseraKernels

/// Runs `GEMMKernels.matmul` on two strided operands; the output starts filled with a
/// sentinel so unwritten elements show.
private func matmul<T: KernelScalar>(_ a: StridedStorage<T>, _ b: StridedStorage<T>) -> ([Int], [T]) {
    let batch = StridedLayout.broadcastShape(
        Array(a.layout.shape.dropLast(2)), Array(b.layout.shape.dropLast(2)))!
    let shape = batch + [a.layout.shape[a.layout.rank - 2], b.layout.shape[b.layout.rank - 1]]
    var out = [T](repeating: T(kernelDoubleValue: 7), count: shape.reduce(1, *))
    a.storage.withUnsafeBytes { aRaw in
        b.storage.withUnsafeBytes { bRaw in
            out.withUnsafeMutableBytes { outRaw in
                GEMMKernels.matmul(
                    a: aRaw.baseAddress!, aLayout: a.layout, b: bRaw.baseAddress!, bLayout: b.layout,
                    type: T.kernelScalarType, output: outRaw.baseAddress!)
            }
        }
    }
    return (shape, out)
}

/// The naive reference for two strided operands, in `Double`.
private func reference<T: KernelScalar>(_ a: StridedStorage<T>, _ b: StridedStorage<T>) -> ([Int], [Double]) {
    NaiveLinearAlgebra.matmul(
        a.logicalElements.map(\.kernelDoubleValue), a.layout.shape, b.logicalElements.map(\.kernelDoubleValue),
        b.layout.shape)
}

private func randomOperand<T: KernelScalar>(
    _ kind: LayoutKind, _ shape: [Int], _ rng: inout SeededRandom, as _: T.Type
) -> StridedStorage<T> {
    let values = rng.doubles(4096)
    return kind.make(shape: shape) { T(kernelDoubleValue: values[$0 % values.count]) }
}

@Suite("GEMM")
struct GEMMTests {
    @Test(
        "float32 matmul matches the naive product for every pair of layouts",
        arguments: LayoutKind.allCases, LayoutKind.allCases)
    func float32Layouts(aKind: LayoutKind, bKind: LayoutKind) {
        var rng = SeededRandom(seed: 11)
        for batch in [[], [3], [2, 2]] {
            let (m, k, n) = (
                Int.random(in: 1...9, using: &rng), Int.random(in: 1...9, using: &rng),
                Int.random(in: 1...9, using: &rng)
            )
            let a = randomOperand(aKind, batch + [m, k], &rng, as: Float.self)
            let b = randomOperand(bKind, batch + [k, n], &rng, as: Float.self)
            let (shape, got) = matmul(a, b)
            let (expectedShape, expected) = reference(a, b)
            #expect(shape == expectedShape)
            let mismatch = firstMismatch(got.map(Double.init), expected, rtol: 1e-5, atol: 1e-5)
            #expect(mismatch == nil, "\(aKind) × \(bKind), batch \(batch), m \(m) k \(k) n \(n): \(mismatch ?? "")")
        }
    }

    @Test("transposed and padded operands go to BLAS without copies; others are copied")
    func operandModes() {
        #expect(GEMMOperandMode.classify(rows: 4, cols: 3, rowStride: 3, colStride: 1) == .noTranspose(ld: 3))
        #expect(GEMMOperandMode.classify(rows: 4, cols: 3, rowStride: 5, colStride: 1) == .noTranspose(ld: 5))
        #expect(GEMMOperandMode.classify(rows: 4, cols: 3, rowStride: 1, colStride: 4) == .transpose(ld: 4))
        #expect(GEMMOperandMode.classify(rows: 1, cols: 3, rowStride: 99, colStride: 1) == .noTranspose(ld: 3))
        #expect(GEMMOperandMode.classify(rows: 4, cols: 1, rowStride: 1, colStride: 0) == .noTranspose(ld: 1))
        #expect(GEMMOperandMode.classify(rows: 4, cols: 3, rowStride: -3, colStride: 1) == .copy)
        #expect(GEMMOperandMode.classify(rows: 4, cols: 3, rowStride: 0, colStride: 1) == .copy)
        #expect(GEMMOperandMode.classify(rows: 4, cols: 3, rowStride: 6, colStride: 2) == .copy)
    }

    @Test("batch dimensions broadcast: [2,1,3,4] × [5,4,6] and stride-0 batch layouts")
    func broadcastBatch() {
        var rng = SeededRandom(seed: 12)
        let a = randomOperand(.contiguous, [2, 1, 3, 4], &rng, as: Float.self)
        let b = randomOperand(.transposed, [5, 4, 6], &rng, as: Float.self)
        let (shape, got) = matmul(a, b)
        let (expectedShape, expected) = reference(a, b)
        #expect(shape == [2, 5, 3, 6] && expectedShape == shape)
        #expect(firstMismatch(got.map(Double.init), expected, rtol: 1e-5, atol: 1e-5) == nil)

        // A [3, 4] matrix pre-broadcast to [7, 3, 4] with a stride-0 batch dimension.
        let single = randomOperand(.padded, [3, 4], &rng, as: Float.self)
        let broadcastA = StridedStorage(storage: single.storage, layout: single.layout.broadcast(to: [7, 3, 4]))
        let c = randomOperand(.contiguous, [7, 4, 2], &rng, as: Float.self)
        let (_, got2) = matmul(broadcastA, c)
        let (_, expected2) = reference(broadcastA, c)
        #expect(firstMismatch(got2.map(Double.init), expected2, rtol: 1e-5, atol: 1e-5) == nil)
    }

    @Test("zero-size M, N and batch write nothing; K = 0 writes zeros")
    func zeroSizes() {
        let cases: [([Int], [Int], Int)] = [
            ([0, 3], [3, 4], 0), ([2, 3], [3, 0], 0), ([0, 2, 3], [3, 4], 0), ([2, 0], [0, 4], 8),
            ([3, 2, 0], [3, 0, 5], 30),
        ]
        for (aShape, bShape, count) in cases {
            let a = LayoutKind.contiguous.make(shape: aShape) { Float($0) }
            let b = LayoutKind.contiguous.make(shape: bShape) { Float($0) }
            let (shape, got) = matmul(a, b)
            #expect(shape.reduce(1, *) == count)
            #expect(got.allSatisfy { $0 == 0 }, "\(aShape) × \(bShape)")
        }
    }

    @Test("many tiny matrices take the loop path and still match")
    func smallBatch() {
        var rng = SeededRandom(seed: 13)
        let a = randomOperand(.transposed, [40, 3, 5], &rng, as: Float.self)
        let b = randomOperand(.reversed, [40, 5, 4], &rng, as: Float.self)
        let (_, got) = matmul(a, b)
        let (_, expected) = reference(a, b)
        #expect(firstMismatch(got.map(Double.init), expected, rtol: 1e-5, atol: 1e-5) == nil)
        let doublesA = randomOperand(.padded, [16, 4, 4], &rng, as: Double.self)
        let doublesB = randomOperand(.contiguous, [1, 4, 4], &rng, as: Double.self)
        let (_, gotD) = matmul(doublesA, doublesB)
        #expect(firstMismatch(gotD, reference(doublesA, doublesB).1, rtol: 1e-12, atol: 1e-12) == nil)
    }

    @Test("float64 goes through dgemm for every layout", arguments: LayoutKind.allCases)
    func float64(kind: LayoutKind) {
        var rng = SeededRandom(seed: 14)
        let a = randomOperand(kind, [2, 7, 11], &rng, as: Double.self)
        let b = randomOperand(.transposed, [2, 11, 6], &rng, as: Double.self)
        let (_, got) = matmul(a, b)
        #expect(firstMismatch(got, reference(a, b).1, rtol: 1e-12, atol: 1e-12) == nil)
    }

    @Test("float16 is computed in float32 and rounded once", arguments: LayoutKind.allCases)
    func float16(kind: LayoutKind) {
        var rng = SeededRandom(seed: 15)
        let a = randomOperand(kind, [3, 6, 10], &rng, as: Float16.self)
        let b = randomOperand(.padded, [10, 5], &rng, as: Float16.self)
        let (_, got) = matmul(a, b)
        let expected = reference(a, b).1
        // One rounding to half precision: relative error ≤ 2^-11, plus float32 accumulation.
        #expect(firstMismatch(got.map(Double.init), expected, rtol: 1e-3, atol: 2e-3) == nil)
    }

    @Test("integer matmul wraps on overflow", arguments: LayoutKind.allCases)
    func integers(kind: LayoutKind) {
        var rng = SeededRandom(seed: 16)
        let big = LayoutKind.contiguous.make(shape: [2, 3]) { _ in Int32.random(in: .min ... .max, using: &rng) }
        let other = kind.make(shape: [3, 4]) { _ in Int32.random(in: .min ... .max, using: &rng) }
        let (_, got) = matmul(big, other)
        let expected = NaiveLinearAlgebra.matmulWrapping(
            big.logicalElements, [2, 3], other.logicalElements, [3, 4])
        #expect(got == expected)

        let small = kind.make(shape: [2, 5, 3]) { _ in Int8.random(in: -100...100, using: &rng) }
        let small2 = LayoutKind.transposed.make(shape: [3, 2]) { _ in Int8.random(in: -100...100, using: &rng) }
        let (_, got8) = matmul(small, small2)
        #expect(
            got8
                == NaiveLinearAlgebra.matmulWrapping(small.logicalElements, [2, 5, 3], small2.logicalElements, [3, 2]))

        let bytes = kind.make(shape: [4, 4]) { UInt8(truncatingIfNeeded: $0 * 37) }
        let (_, gotU8) = matmul(bytes, bytes)
        #expect(
            gotU8 == NaiveLinearAlgebra.matmulWrapping(bytes.logicalElements, [4, 4], bytes.logicalElements, [4, 4]))
    }

    @Test("sgemm applies alpha, beta and transpose flags; k = 0 scales C by beta")
    func sgemmWrapper() {
        let a: [Float] = [1, 2, 3, 4, 5, 6]  // [2, 3]; as aT it is [3, 2]
        let b: [Float] = [1, 0, -1, 2, 1, 0]  // [3, 2]
        var c: [Float] = [10, 20, 30, 40]
        GEMMKernels.sgemm(
            transposeA: false, transposeB: false, m: 2, n: 2, k: 3, alpha: 2, a: a, lda: 3, b: b, ldb: 2, beta: 0.5,
            c: &c, ldc: 2)
        // A·B by hand: [[1 - 2 + 3, 0 + 4 + 0], [4 - 5 + 6, 0 + 10 + 0]] = [[2, 4], [5, 10]].
        let expected: [Float] = [9, 18, 25, 40]  // 2 · A·B + 0.5 · C
        #expect(c == expected)
        var d: [Float] = [0, 0, 0, 0]
        // The same product with both operands stored transposed.
        let aT: [Float] = [1, 4, 2, 5, 3, 6]  // [3, 2] buffer whose transpose is A
        let bT: [Float] = [1, -1, 1, 0, 2, 0]  // [2, 3] buffer whose transpose is B
        GEMMKernels.sgemm(
            transposeA: true, transposeB: true, m: 2, n: 2, k: 3, alpha: 1, a: aT, lda: 2, b: bT, ldb: 3, beta: 0,
            c: &d, ldc: 2)
        #expect(d == [2, 4, 5, 10])
        var e: [Float] = [1, 2, 3, 4]
        GEMMKernels.sgemm(
            transposeA: false, transposeB: false, m: 2, n: 2, k: 0, alpha: 1, a: a, lda: 1, b: b, ldb: 2, beta: 3,
            c: &e, ldc: 2)
        #expect(e == [3, 6, 9, 12])
    }

    @Test("NumPy fixtures: plain, transposed, broadcast batch, float64")
    func numpyFixtures() throws {
        func load(_ name: String) throws -> NumPyArray { try Fixtures.npy("kernels/\(name).npy") }
        func storage<T>(_ array: NumPyArray, _ values: [T]) -> StridedStorage<T> {
            StridedStorage(storage: values, layout: StridedLayout(contiguous: array.shape))
        }
        for name in ["plain", "broadcast"] {
            let a = try load("gemm_\(name)_a")
            let b = try load("gemm_\(name)_b")
            let out = try load("gemm_\(name)_out")
            let (shape, got) = matmul(storage(a, a.floats), storage(b, b.floats))
            #expect(shape == out.shape)
            #expect(firstMismatch(got, out.floats, rtol: 1e-5, atol: 1e-6) == nil, "\(name)")
        }
        let at = try load("gemm_transposed_at")
        let bt = try load("gemm_transposed_bt")
        let out = try load("gemm_transposed_out")
        let a = StridedStorage(storage: at.floats, layout: StridedLayout(contiguous: at.shape).permuted([1, 0]))
        let b = StridedStorage(storage: bt.floats, layout: StridedLayout(contiguous: bt.shape).permuted([1, 0]))
        let (shape, got) = matmul(a, b)
        #expect(shape == out.shape)
        #expect(firstMismatch(got, out.floats, rtol: 1e-5, atol: 1e-6) == nil)

        let a64 = try load("gemm_float64_a")
        let b64 = try load("gemm_float64_b")
        let out64 = try load("gemm_float64_out")
        #expect(a64.dtype == "<f8")
        let (_, got64) = matmul(storage(a64, a64.doubles), storage(b64, b64.doubles))
        #expect(firstMismatch(got64, out64.doubles, rtol: 1e-12, atol: 1e-12) == nil)
    }
}
