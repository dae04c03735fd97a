import Foundation
import TesseraKernels
import Testing
import _TesseraTestSupport

/// Runs softmax or log-softmax on a test operand and returns the output as `Double`s.
func runSoftmax<T: KernelScalar>(_ operand: StridedStorage<T>, axis: Int, log: Bool) -> [Double] {
    let count = operand.layout.count
    let type = T.kernelScalarType
    let raw = UnsafeMutableRawPointer.allocate(byteCount: Swift.max(1, count * type.byteCount), alignment: 64)
    defer { raw.deallocate() }
    operand.storage.withUnsafeBytes { input in
        if log {
            SoftmaxKernels.logSoftmax(
                input: input.baseAddress!, layout: operand.layout, type: type, axis: axis, output: raw)
        } else {
            SoftmaxKernels.softmax(
                input: input.baseAddress!, layout: operand.layout, type: type, axis: axis, output: raw)
        }
    }
    return readDoubles(raw, count: count, type: type)
}

@Suite("Softmax")
struct SoftmaxTests {
    @Test(
        "float32 random shapes, every axis, match the naive reference", arguments: LayoutKind.allCases, [false, true])
    func randomShapes(kind: LayoutKind, log: Bool) {
        var rng = SeededRandom(seed: 21)
        for rank in 1...4 {
            for _ in 0..<2 {
                let shape = rng.shape(rank: rank, sizes: 1...5)
                let values = rng.floats(2048, in: -5...5)
                let operand = kind.make(shape: shape) { values[$0 % values.count] }
                for axis in 0..<rank {
                    let got = runSoftmax(operand, axis: axis, log: log)
                    let want = NaiveReduction.softmax(
                        operand.storage.map(Double.init), operand.layout, axis: axis, log: log)
                    let mismatch = firstMismatch(got, want, rtol: 1e-5, atol: 1e-6)
                    #expect(mismatch == nil, "\(kind) shape \(shape) axis \(axis) log \(log): \(mismatch ?? "")")
                }
            }
        }
    }

    @Test("float16 and float64", arguments: [false, true])
    func otherTypes(log: Bool) {
        var rng = SeededRandom(seed: 4)
        let values = rng.doubles(600, in: -4...4)
        for kind in LayoutKind.allCases {
            let doubles = kind.make(shape: [3, 5, 40]) { values[$0 % values.count] }
            let halves = kind.make(shape: [3, 5, 40]) { Float16(values[$0 % values.count]) }
            for axis in 0..<3 {
                let wantDouble = NaiveReduction.softmax(doubles.storage, doubles.layout, axis: axis, log: log)
                #expect(
                    firstMismatch(runSoftmax(doubles, axis: axis, log: log), wantDouble, rtol: 1e-12, atol: 1e-14)
                        == nil)
                let wantHalf = NaiveReduction.softmax(
                    halves.storage.map(\.kernelDoubleValue), halves.layout, axis: axis, log: log)
                let mismatch = firstMismatch(runSoftmax(halves, axis: axis, log: log), wantHalf, rtol: 2e-3, atol: 1e-4)
                #expect(mismatch == nil, "float16 \(kind) axis \(axis): \(mismatch ?? "")")
            }
        }
    }

    @Test("broadcast input, negative axis, large and infinite values")
    func edges() {
        let row = StridedStorage<Float>(
            storage: [1, 2, 3], layout: StridedLayout(contiguous: [3]).broadcast(to: [4, 3]))
        let got = runSoftmax(row, axis: -1, log: false)
        #expect(firstMismatch(got, NaiveReduction.softmax([1, 2, 3], row.layout, axis: 1, log: false)) == nil)
        let column = runSoftmax(row, axis: 0, log: false)
        #expect(column.allSatisfy { abs($0 - 0.25) < 1e-6 })

        let large = StridedStorage<Float>(storage: [1e30, 1e30, -1e30, 0], layout: StridedLayout(contiguous: [4]))
        #expect(runSoftmax(large, axis: 0, log: false) == [0.5, 0.5, 0, 0])
        let logLarge = runSoftmax(large, axis: 0, log: true)
        #expect(abs(logLarge[0] + 0.6931472) < 1e-6 && logLarge[2] == -Double(Float(2e30)))

        let minusInf = [Float](repeating: -.infinity, count: 40) + [0, -.infinity]
        let lines = StridedStorage<Float>(storage: minusInf, layout: StridedLayout(contiguous: [21, 2]))
        let byRow = runSoftmax(
            StridedStorage(storage: minusInf, layout: StridedLayout(contiguous: [2, 21])), axis: 1, log: false)
        #expect(byRow[..<21].allSatisfy { $0.isNaN })
        #expect(Array(byRow[21...]) == [Double](repeating: 0, count: 19) + [1, 0])
        let byColumn = runSoftmax(lines, axis: 0, log: true)
        #expect(byColumn[40] == 0 && byColumn[41].isNaN && byColumn[39].isNaN && byColumn[0] == -.infinity)
    }

    @Test("medium float32 operand along the last and first axes", arguments: [1, 0])
    func medium(axis: Int) {
        var rng = SeededRandom(seed: 8)
        let (rows, columns) = (40, 1000)
        let values = rng.floats(rows * columns, in: -8...8)
        let operand = StridedStorage(storage: values, layout: StridedLayout(contiguous: [rows, columns]))
        let got = runSoftmax(operand, axis: axis, log: false)
        // Check a few lines against a direct Double computation (the naive reference is slow in debug).
        for line in [0, 7, 39] {
            let indices = axis == 1 ? (0..<columns).map { line * columns + $0 } : (0..<rows).map { $0 * columns + line }
            let x = indices.map { Double(values[$0]) }
            let m = x.max()!
            let e = x.map { exp($0 - m) }
            let s = e.reduce(0, +)
            let mismatch = firstMismatch(indices.map { got[$0] }, e.map { $0 / s }, rtol: 1e-5, atol: 1e-7)
            #expect(mismatch == nil, "axis \(axis) line \(line): \(mismatch ?? "")")
        }
        let total = got.reduce(0, +)
        #expect(abs(total - Double(axis == 1 ? rows : columns)) < 1e-2)
    }
}
