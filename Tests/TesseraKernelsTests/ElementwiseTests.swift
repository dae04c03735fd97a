import Foundation
import TesseraKernels
import Testing
import _TesseraTestSupport

/// Runs a unary kernel on `input` (storage + layout) and returns the contiguous result.
func runUnary<T: KernelScalar>(_ op: UnaryOp, _ input: StridedStorage<T>) -> [T] {
    let count = input.layout.count
    return [T](unsafeUninitializedCapacity: max(count, 1)) { out, initialized in
        input.storage.withUnsafeBytes { src in
            ElementwiseKernels.unary(
                op, input: src.baseAddress!, layout: input.layout, type: T.kernelScalarType,
                output: UnsafeMutableRawPointer(out.baseAddress!))
        }
        initialized = count
    }
}

/// Runs a binary kernel and returns the contiguous result as `R` (the op's result type).
func runBinary<T: KernelScalar, R: KernelScalar>(
    _ op: BinaryOp, _ a: StridedStorage<T>, _ b: StridedStorage<T>, result _: R.Type
) -> [R] {
    let shape = StridedLayout.broadcastShape(a.layout.shape, b.layout.shape)!
    let count = shape.reduce(1, *)
    return [R](unsafeUninitializedCapacity: max(count, 1)) { out, initialized in
        a.storage.withUnsafeBytes { pa in
            b.storage.withUnsafeBytes { pb in
                ElementwiseKernels.binary(
                    op, lhs: pa.baseAddress!, lhsLayout: a.layout, rhs: pb.baseAddress!, rhsLayout: b.layout,
                    type: T.kernelScalarType, output: UnsafeMutableRawPointer(out.baseAddress!))
            }
        }
        initialized = count
    }
}

@Suite("Element-wise kernels")
struct ElementwiseTests {
    @Test("float32 unary ops match the Double reference on every layout", arguments: UnaryOp.allCases)
    func unaryFloat(op: UnaryOp) {
        var rng = SeededRandom(seed: UInt64(op.rawValue) + 1)
        let domain = NaiveElementwise.domain(of: op)
        for kind in LayoutKind.allCases {
            let shape = rng.shape(rank: 3, sizes: 1...9)
            let input = kind.make(shape: shape) { _ in Float(Double.random(in: domain, using: &rng)) }
            let got = runUnary(op, input)
            let expected = input.logicalElements.map { NaiveElementwise.unary(op, Double($0)) }
            let mismatch = firstMismatch(got.map(Double.init), expected, rtol: 2e-6, atol: 1e-6)
            #expect(mismatch == nil, "\(op) on \(kind) \(shape): \(mismatch ?? "")")
        }
    }

    @Test("float64 unary ops match the Double reference", arguments: UnaryOp.allCases)
    func unaryDouble(op: UnaryOp) {
        var rng = SeededRandom(seed: UInt64(op.rawValue) + 100)
        let input = LayoutKind.padded.make(shape: [3, 37]) { _ in
            Double.random(in: NaiveElementwise.domain(of: op), using: &rng)
        }
        let got = runUnary(op, input)
        let expected = input.logicalElements.map { NaiveElementwise.unary(op, $0) }
        #expect(firstMismatch(got, expected, rtol: 1e-12, atol: 1e-12) == nil)
    }

    @Test("float16 ops compute in float32 and round once")
    func unaryHalf() {
        var rng = SeededRandom(seed: 7)
        let input = LayoutKind.transposed.make(shape: [5, 33]) { _ in Float16(Float.random(in: -3...3, using: &rng)) }
        for op in [UnaryOp.exp, .sigmoid, .tanh, .square, .neg] {
            let got = runUnary(op, input)
            let expected = input.logicalElements.map { Float16(Float(NaiveElementwise.unary(op, Double(Float($0))))) }
            #expect(got.map(Float.init) == expected.map(Float.init), "\(op)")
        }
    }

    @Test("special values: exp, sigmoid and erf at the edges")
    func specialValues() {
        let values: [Float] = [-.infinity, -1000, -88, -87, -1e-6, 0, 1e-6, 0.49, 0.5, 3, 88, 89, .infinity, .nan]
        let input = LayoutKind.contiguous.make(shape: [values.count]) { values[$0] }
        for op in [UnaryOp.exp, .sigmoid, .erf, .sign, .abs, .round] {
            let got = runUnary(op, input)
            let expected = values.map { Float(NaiveElementwise.unary(op, Double($0))) }
            let mismatch = firstMismatch(got.map(Double.init), expected.map(Double.init), rtol: 2e-6, atol: 1e-37)
            #expect(mismatch == nil, "\(op): \(mismatch ?? "")")
        }
        #expect(
            runUnary(.round, LayoutKind.contiguous.make(shape: [4]) { [0.5, 1.5, 2.5, -0.5][$0] as Float }) == [
                0, 2, 2, -0,
            ])
    }

    @Test("float32 binary ops broadcast over every layout pair", arguments: BinaryOp.allCases)
    func binaryFloat(op: BinaryOp) {
        var rng = SeededRandom(seed: 1000 + UInt64(op.rawValue))
        let shapes: [([Int], [Int])] = [
            ([4, 5, 6], [4, 5, 6]), ([4, 1, 6], [5, 1]), ([], [3, 4]), ([2, 3, 4], []),
        ]
        for (sa, sb) in shapes {
            for kind in LayoutKind.allCases {
                let positive = op == .pow
                let a = kind.make(shape: sa) { _ in
                    Float.random(in: positive ? 0.1...3 : -3...3, using: &rng).rounded(.down) + (positive ? 0.5 : 0)
                }
                let b = LayoutKind.allCases.randomElement(using: &rng)!.make(shape: sb) { _ in
                    Float.random(in: -3...3, using: &rng).rounded(.down) + 0.25
                }
                let shape = StridedLayout.broadcastShape(sa, sb)!
                let ea = NaiveLayout.gather(a.storage, a.layout.broadcast(to: shape))
                let eb = NaiveLayout.gather(b.storage, b.layout.broadcast(to: shape))
                let expected = zip(ea, eb).map { NaiveElementwise.binary(op, Double($0), Double($1)) }
                if op.producesBool {
                    let got = runBinary(op, a, b, result: Bool.self)
                    #expect(got.map { $0 ? 1.0 : 0.0 } == expected, "\(op) \(sa) \(sb) \(kind)")
                } else {
                    let got = runBinary(op, a, b, result: Float.self)
                    let mismatch = firstMismatch(got.map(Double.init), expected, rtol: 2e-6, atol: 1e-6)
                    #expect(mismatch == nil, "\(op) \(sa) \(sb) \(kind): \(mismatch ?? "")")
                }
            }
        }
    }

    @Test("integer binary ops wrap, truncate and floor as documented", arguments: BinaryOp.allCases)
    func binaryInteger(op: BinaryOp) {
        var rng = SeededRandom(seed: 2000 + UInt64(op.rawValue))
        func check<T: KernelScalar & FixedWidthInteger>(_: T.Type) {
            let small = op == .pow
            let a = LayoutKind.padded.make(shape: [3, 41]) { _ in
                small
                    ? T(truncatingIfNeeded: Int.random(in: T.isSigned ? -3...3 : 0...3, using: &rng))
                    : T.random(in: T.min...T.max, using: &rng)
            }
            var b = LayoutKind.transposed.make(shape: [41]) { _ in
                small
                    ? T(truncatingIfNeeded: Int.random(in: T.isSigned ? -2...5 : 0...5, using: &rng))
                    : T.random(in: T.min...T.max, using: &rng)
            }
            b.storage[3] = 0
            let ea = NaiveLayout.gather(a.storage, a.layout.broadcast(to: [3, 41]))
            let eb = NaiveLayout.gather(b.storage, b.layout.broadcast(to: [3, 41]))
            let expected = zip(ea, eb).map { NaiveElementwise.binary(op, Int64($0), Int64($1)) }
            if op.producesBool {
                let got = runBinary(op, a, b, result: Bool.self)
                #expect(got.map { $0 ? Int64(1) : 0 } == expected, "\(op) \(T.self)")
            } else {
                let got = runBinary(op, a, b, result: T.self)
                #expect(got == expected.map { T(truncatingIfNeeded: $0) }, "\(op) \(T.self)")
            }
        }
        check(Int32.self)
        check(Int8.self)
        check(UInt8.self)
        check(Int16.self)
        check(UInt16.self)
        check(UInt32.self)
    }

    @Test("bool operands support logic, comparisons, min and max")
    func binaryBool() {
        let a = LayoutKind.contiguous.make(shape: [4]) { [false, false, true, true][$0] }
        let b = LayoutKind.contiguous.make(shape: [4]) { [false, true, false, true][$0] }
        #expect(runBinary(.logicalAnd, a, b, result: Bool.self) == [false, false, false, true])
        #expect(runBinary(.logicalXor, a, b, result: Bool.self) == [false, true, true, false])
        #expect(runBinary(.max, a, b, result: Bool.self) == [false, true, true, true])
        #expect(runBinary(.less, a, b, result: Bool.self) == [false, true, false, false])
    }

    @Test("integer unary ops: neg, abs, sign, square wrap")
    func unaryInteger() {
        let values: [Int8] = [-128, -5, 0, 7, 127]
        let input = LayoutKind.contiguous.make(shape: [5]) { values[$0] }
        #expect(runUnary(.neg, input) == values.map { 0 &- $0 })
        #expect(runUnary(.abs, input) == [-128, 5, 0, 7, 127])
        #expect(runUnary(.sign, input) == [-1, -1, 0, 1, 1])
        #expect(runUnary(.square, input) == values.map { $0 &* $0 })
    }

    @Test("zero-size and rank-0 operands")
    func edgeShapes() {
        let empty = LayoutKind.contiguous.make(shape: [3, 0, 2]) { Float($0) }
        #expect(runUnary(.exp, empty).isEmpty)
        let scalar = LayoutKind.contiguous.make(shape: []) { _ in Float(2) }
        #expect(runUnary(.square, scalar) == [4])
        let row = LayoutKind.contiguous.make(shape: [3]) { Float($0) }
        #expect(runBinary(.mul, scalar, row, result: Float.self) == [0, 2, 4])
    }

    @Test("large operands run in parallel chunks with the same results")
    func largeParallel() {
        var rng = SeededRandom(seed: 99)
        let a = LayoutKind.contiguous.make(shape: [300_001]) { _ in Float.random(in: -2...2, using: &rng) }
        let b = LayoutKind.reversed.make(shape: [300_001]) { _ in Float.random(in: -2...2, using: &rng) }
        let got = runBinary(.max, a, b, result: Float.self)
        let expected = zip(a.logicalElements, b.logicalElements).map { Swift.max($0, $1) }
        #expect(got == expected)
        let e = runUnary(.exp, a)
        #expect(
            firstMismatch(e.map(Double.init), a.logicalElements.map { Foundation.exp(Double($0)) }, rtol: 2e-6) == nil)
    }

    @Test("select picks per element with broadcasting")
    func select() {
        let condition = LayoutKind.contiguous.make(shape: [2, 1]) { [true, false][$0] }
        let a = LayoutKind.contiguous.make(shape: [2, 3]) { Float($0) }
        let b = LayoutKind.contiguous.make(shape: []) { _ in Float(-1) }
        var out = [Float](repeating: 0, count: 6)
        condition.storage.withUnsafeBytes { c in
            a.storage.withUnsafeBytes { pa in
                b.storage.withUnsafeBytes { pb in
                    out.withUnsafeMutableBytes { o in
                        ElementwiseKernels.select(
                            condition: c.baseAddress!, conditionLayout: condition.layout, a: pa.baseAddress!,
                            aLayout: a.layout, b: pb.baseAddress!, bLayout: b.layout, type: .float32,
                            output: o.baseAddress!)
                    }
                }
            }
        }
        #expect(out == [0, 1, 2, -1, -1, -1])
    }
}
