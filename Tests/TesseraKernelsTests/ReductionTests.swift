import TesseraKernels
import Testing
import _TesseraTestSupport

@Suite("Reductions")
struct ReductionTests {
    static let floatOps: [ReductionOp] = ReductionOp.allCases

    @Test("float32 random shapes match the naive reference", arguments: LayoutKind.allCases, floatOps)
    func randomShapes(kind: LayoutKind, op: ReductionOp) {
        var rng = SeededRandom(seed: 7 + UInt64(op.rawValue))
        for rank in 0...4 {
            for _ in 0..<3 {
                let shape = rng.shape(rank: rank, sizes: 1...5)
                let axes = (0..<rank).filter { _ in Bool.random(using: &rng) }
                var values = rng.floats(4096)
                if op == .product { values = values.map { 0.5 + abs($0) } }
                if op == .all || op == .any { values = values.map { $0 > 0.3 ? 1 : 0 } }
                let operand = kind.make(shape: shape) { values[$0 % values.count] }
                let got = runReduce(op, operand, axes: axes)
                let want = expectedReduce(op, operand, axes: axes)
                let mismatch = firstMismatch(got, want, rtol: 1e-5, atol: 1e-5)
                #expect(mismatch == nil, "\(op) \(kind) shape \(shape) axes \(axes): \(mismatch ?? "")")
            }
        }
    }

    @Test("every axis subset of a rank-3 operand", arguments: LayoutKind.allCases)
    func everyAxisSubset(kind: LayoutKind) {
        var rng = SeededRandom(seed: 3)
        let values = rng.floats(512)
        let operand = kind.make(shape: [3, 4, 5]) { values[$0 % values.count] }
        for axes in axisSubsets(rank: 3) + [[2, 0], [1, 2, 0]] {
            for op in [ReductionOp.sum, .mean, .max, .min, .argmax, .argmin] {
                let got = runReduce(op, operand, axes: axes)
                let want = expectedReduce(op, operand, axes: axes)
                let mismatch = firstMismatch(got, want, rtol: 1e-5, atol: 1e-6)
                #expect(mismatch == nil, "\(op) \(kind) axes \(axes): \(mismatch ?? "")")
            }
        }
    }

    @Test("broadcast (stride-0) inputs")
    func broadcastInputs() {
        var rng = SeededRandom(seed: 11)
        let values = rng.floats(15)
        let base = StridedStorage(storage: values, layout: StridedLayout(contiguous: [3, 1, 5]))
        let operand = StridedStorage(storage: values, layout: base.layout.broadcast(to: [2, 3, 4, 5]))
        for axes in axisSubsets(rank: 4) {
            for op in [ReductionOp.sum, .mean, .max, .argmax, .argmin, .product] {
                let got = runReduce(op, operand, axes: axes)
                let want = expectedReduce(op, operand, axes: axes)
                let mismatch = firstMismatch(got, want, rtol: 1e-5, atol: 1e-6)
                #expect(mismatch == nil, "\(op) axes \(axes): \(mismatch ?? "")")
            }
        }
    }

    @Test("zero-size dimensions give identities or empty outputs")
    func zeroSize() {
        let empty = StridedStorage<Float>(storage: [0], layout: StridedLayout(contiguous: [2, 0, 3]))
        #expect(runReduce(.sum, empty, axes: [1]) == [0, 0, 0, 0, 0, 0])
        #expect(runReduce(.product, empty, axes: [1]) == [1, 1, 1, 1, 1, 1])
        #expect(runReduce(.mean, empty, axes: [1, 2]).allSatisfy { $0.isNaN })
        #expect(runReduce(.all, empty, axes: [1]) == [1, 1, 1, 1, 1, 1])
        #expect(runReduce(.any, empty, axes: [0, 1]) == [0, 0, 0])
        #expect(runReduce(.sum, empty, axes: [0]) == [])
        #expect(runReduce(.max, empty, axes: [0, 2]) == [])
        let ints = StridedStorage<Int32>(storage: [0], layout: StridedLayout(contiguous: [0, 4]))
        #expect(runReduce(.sum, ints, axes: [0]) == [0, 0, 0, 0])
        #expect(runReduce(.mean, ints, axes: [0], outputType: .float32).allSatisfy { $0.isNaN })
    }

    @Test("rank 0 and empty axes act element-wise")
    func identity() {
        let scalar = StridedStorage<Float>(storage: [9, 2.5], layout: StridedLayout(shape: [], strides: [], offset: 1))
        for op in [ReductionOp.sum, .mean, .product, .max, .min] {
            #expect(runReduce(op, scalar, axes: []) == [2.5])
        }
        #expect(runReduce(.argmax, scalar, axes: []) == [0])
        #expect(runReduce(.any, scalar, axes: []) == [1])
        let matrix = LayoutKind.transposed.make(shape: [2, 3]) { Float($0) - 2 }
        #expect(runReduce(.sum, matrix, axes: []) == matrix.logicalElements.map(Double.init))
        #expect(runReduce(.argmin, matrix, axes: []) == [0, 0, 0, 0, 0, 0])
        #expect(runReduce(.all, matrix, axes: []) == matrix.logicalElements.map { $0 != 0 ? 1 : 0 })
    }

    @Test("argmax and argmin return the first index on ties")
    func ties() {
        let rows: [Float] = [1, 5, 5, 2, 5, 7, 0, 7, 1, 7, 5, -1]
        let operand = StridedStorage(storage: rows, layout: StridedLayout(contiguous: [3, 4]))
        #expect(runReduce(.argmax, operand, axes: [1]) == [1, 1, 1])
        #expect(runReduce(.argmin, operand, axes: [1]) == [0, 2, 3])
        #expect(runReduce(.argmax, operand, axes: [0]) == [1, 1, 0, 1])
        #expect(runReduce(.argmin, operand, axes: [0]) == [0, 0, 1, 2])
        #expect(runReduce(.argmax, operand, axes: [0, 1]) == [5])
        #expect(runReduce(.argmin, operand, axes: [1, 0]) == [11])
        // Long rows take the SIMD path: the first of several equal maxima wins.
        var long = [Float](repeating: 0, count: 1000)
        long[700] = 3
        long[70] = 3
        long[999] = 3
        let longOperand = StridedStorage(storage: long, layout: StridedLayout(contiguous: [1000]))
        #expect(runReduce(.argmax, longOperand, axes: [0]) == [70])
        #expect(runReduce(.argmin, longOperand, axes: [0]) == [0])
    }

    @Test("NaN propagates through max/min and wins argmax/argmin", arguments: [5, 40, 1000])
    func nanHandling(length: Int) {
        var values = (0..<(2 * length)).map { Float($0 % 17) }
        values[length / 2] = .nan
        values[length - 1] = .nan
        values[length + 3] = .nan
        let rows = StridedStorage(storage: values, layout: StridedLayout(contiguous: [2, length]))
        #expect(runReduce(.max, rows, axes: [1]).allSatisfy { $0.isNaN })
        #expect(runReduce(.min, rows, axes: [1]).allSatisfy { $0.isNaN })
        #expect(runReduce(.argmax, rows, axes: [1]) == [Double(length / 2), 3])
        #expect(runReduce(.argmin, rows, axes: [1]) == [Double(length / 2), 3])
        let columns = StridedStorage(storage: values, layout: StridedLayout(contiguous: [length, 2]))
        for op in [ReductionOp.max, .min, .argmax, .argmin, .sum] {
            let got = runReduce(op, columns, axes: [0])
            let want = expectedReduce(op, columns, axes: [0])
            #expect(firstMismatch(got, want) == nil, "\(op) columns: \(got) vs \(want)")
        }
        #expect(runReduce(.any, rows, axes: [1]) == [1, 1])
    }

    @Test("NaN handling on the scalar paths (strided runs, float16, float64)", arguments: LayoutKind.allCases)
    func nanOnScalarPaths(kind: LayoutKind) {
        func check<T: KernelScalar & BinaryFloatingPoint>(_: T.Type) {
            let operand = kind.make(shape: [4, 3, 5]) { (i: Int) -> T in
                i % 7 == 3 ? .nan : T(Double((i * 37) % 11) - 5)
            }
            for axes in axisSubsets(rank: 3) {
                for op in [ReductionOp.max, .min, .argmax, .argmin, .sum, .any] {
                    let got = runReduce(op, operand, axes: axes)
                    let want = expectedReduce(op, operand, axes: axes)
                    let mismatch = firstMismatch(got, want)
                    #expect(mismatch == nil, "\(T.self) \(op) \(kind) axes \(axes): \(mismatch ?? "")")
                }
            }
        }
        check(Float.self)
        check(Float16.self)
        check(Double.self)
    }

    @Test("every scalar type: sum, max, min, argmax, argmin, product, all, any", arguments: KernelScalarType.allCases)
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
        case .bool: checkType(Bool.self)
        }
    }

    func checkType<T: KernelScalar>(_: T.Type) {
        var rng = SeededRandom(seed: 5)
        let type = T.kernelScalarType
        let values = randomValues(T.self, count: 400, rng: &rng)
        var ops: [ReductionOp] = [.max, .min, .argmax, .argmin, .all, .any]
        if type != .bool { ops += [.sum, .product] }
        if type.isFloatingPoint { ops.append(.mean) }
        let rtol = type == .float16 ? 2e-3 : 1e-5
        for kind in LayoutKind.allCases {
            for axes in axisSubsets(rank: 3) {
                let operand = kind.make(shape: [3, 4, 6]) { values[$0 % values.count] }
                for op in ops {
                    // Keep integer products inside Double's exact range.
                    if op == .product && !type.isFloatingPoint && axes.count > 1 { continue }
                    let got = runReduce(op, operand, axes: axes)
                    let want = expectedReduce(op, operand, axes: axes)
                    let mismatch = firstMismatch(got, want, rtol: rtol, atol: 1e-4)
                    #expect(mismatch == nil, "\(type) \(op) \(kind) axes \(axes): \(mismatch ?? "")")
                }
            }
        }
    }

    @Test("integer sums wrap; integer means are exact floats")
    func integerSemantics() {
        let bytes = StridedStorage<Int8>(
            storage: Array(repeating: 100, count: 6), layout: StridedLayout(contiguous: [6]))
        #expect(runReduce(.sum, bytes, axes: [0]) == [Double(Int8(truncatingIfNeeded: 600))])
        let unsigned = StridedStorage<UInt8>(storage: [200, 100, 7], layout: StridedLayout(contiguous: [3]))
        #expect(runReduce(.sum, unsigned, axes: [0]) == [51])
        #expect(runReduce(.mean, unsigned, axes: [0], outputType: .float64) == [307.0 / 3])
        #expect(runReduce(.mean, unsigned, axes: [0], outputType: .float32) == [Double(Float(307.0 / 3))])
        let big = StridedStorage<Int32>(storage: [.max, .max], layout: StridedLayout(contiguous: [2]))
        #expect(runReduce(.mean, big, axes: [0], outputType: .float64) == [Double(Int32.max)])
        #expect(runReduce(.sum, big, axes: [0]) == [-2])
    }

    @Test("float16 accumulates in float32")
    func float16Accumulates() {
        let ones = StridedStorage<Float16>(
            storage: Array(repeating: 1, count: 3000), layout: StridedLayout(contiguous: [3000]))
        #expect(runReduce(.sum, ones, axes: [0]) == [3000])
        #expect(runReduce(.mean, ones, axes: [0]) == [1])
    }

    @Test("medium float32 operand (parallel chunks, SIMD paths)", arguments: [LayoutKind.contiguous, .transposed])
    func medium(kind: LayoutKind) {
        var rng = SeededRandom(seed: 99)
        let (rows, columns) = (256, 1000)
        let values = rng.floats(rows * columns, in: 0...1)
        let operand = kind.make(shape: [rows, columns]) { values[$0] }
        let logical = (0..<(rows * columns)).map { i in
            Double(kind == .contiguous ? values[i] : values[(i % columns) * rows + i / columns])
        }
        // Groups built by hand: the generic naive reference is too slow for 200k elements in debug.
        let byRow = (0..<rows).map { r in Array(logical[(r * columns)..<((r + 1) * columns)]) }
        let byColumn = (0..<columns).map { c in (0..<rows).map { logical[$0 * columns + c] } }
        for (axes, groups) in [([1], byRow), ([0], byColumn), ([0, 1], [logical])] {
            for op in [ReductionOp.sum, .max, .argmax] {
                let got = runReduce(op, operand, axes: axes)
                let want = groups.map { group in
                    let value = NaiveReduction.reduceValues(op, group)
                    return op == .argmax || op == .argmin ? value : Double(Float(value))
                }
                let mismatch = firstMismatch(got, want, rtol: 1e-5, atol: 1e-6)
                #expect(mismatch == nil, "\(op) \(kind) axes \(axes): \(mismatch ?? "")")
            }
        }
    }
}
