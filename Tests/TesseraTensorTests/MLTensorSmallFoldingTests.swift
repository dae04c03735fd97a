import TesseraGraph
import TesseraKernels
import Testing

@testable import TesseraTensor

/// Build-time folding of small `Float` element-wise ops (`MLTensor+SmallFolding.swift`): a
/// folded op must give, bit for bit, what the same op computes inside a fused program.
@Suite("Small element-wise ops fold when built")
struct MLTensorSmallFoldingTests {
    /// Values that exercise every branch of the kernels: signed zeros, infinities, NaN, a
    /// subnormal, exact halves for rounding, and ordinary numbers of both signs.
    static let specials: [Float] = [
        0, -0.0, 1, -1, 0.5, -0.5, 1.5, -2.5, .infinity, -.infinity, .nan, Float(bitPattern: 0x0001_2345), 3.75, -7.25,
        100, 0.001,
    ]

    /// 16 values: the specials, then a deterministic spread.
    static func values(_ seed: Int) -> [Float] {
        var state = UInt64(seed) &* 0x9E37_79B9_7F4A_7C15 | 1
        return specials.map { value in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let noise = Float(Int64(bitPattern: state >> 11) % 2000) / 250
            return seed == 0 ? value : noise
        }
    }

    /// `tensor`'s elements as bit patterns.
    static func bits(_ tensor: MLTensor) -> [UInt32] {
        tensor.shapedArray(of: Float.self).scalars.map(\.bitPattern)
    }

    /// Above the folding limit, so the op stays in the graph and runs as a fused program.
    static let lazyCount = MLTensor.smallFoldingLimit * 2

    /// `values` repeated to `lazyCount` elements, then sliced back after the op: the first 16
    /// results of the fused program.
    static func viaGraph(_ values: [Float], _ body: (MLTensor) -> MLTensor) -> [UInt32] {
        let repeated = (0..<lazyCount).map { values[$0 % values.count] }
        let result = body(MLTensor(shape: [lazyCount], scalars: repeated, scalarType: Float.self))
        #expect(result.node.leafElements == nil, "an op over \(lazyCount) elements must not fold")
        return Array(bits(result).prefix(values.count))
    }

    @Test("a chain on a materialized tensor is computed as it is built: nothing is left to run")
    func chainFolds() {
        var x = MLTensor(shape: [16], scalars: Self.values(1), scalarType: Float.self)
        for _ in 0..<10 { x = x * 1.0001 + 0.0001 }
        #expect(x.node.leafElements != nil)
        let statistics = MLTensor.materialize([x])
        #expect(statistics.steps == 0)
        let expected = Self.values(1).map { value in
            var v = value
            for _ in 0..<10 { v = v * 1.0001 + 0.0001 }
            return v.bitPattern
        }
        #expect(Self.bits(x) == expected)
    }

    @Test(
        "every float binary op folds to the fused program's bits",
        arguments: BinaryOp.allCases.filter { !$0.producesBool })
    func binaryMatchesFused(_ op: BinaryOp) {
        for (lhsSeed, rhsSeed) in [(0, 1), (1, 0), (2, 3), (0, 0)] {
            let a = Self.values(lhsSeed)
            let b = Self.values(rhsSeed)
            let folded = MLTensor(shape: [16], scalars: a, scalarType: Float.self)
                .binary(op, MLTensor(shape: [16], scalars: b, scalarType: Float.self))
            #expect(folded.node.leafElements != nil, "\(op) on 16 materialized floats folds")
            let repeatedB = (0..<Self.lazyCount).map { b[$0 % b.count] }
            let lazy = Self.viaGraph(a) {
                $0.binary(op, MLTensor(shape: [Self.lazyCount], scalars: repeatedB, scalarType: Float.self))
            }
            #expect(Self.bits(folded) == lazy, "\(op) seeds \(lhsSeed), \(rhsSeed)")
        }
    }

    @Test(
        "a scalar operand on either side folds to the fused program's bits",
        arguments: [BinaryOp.sub, .div, .pow, .max])
    func scalarOperand(_ op: BinaryOp) {
        let a = Self.values(0)
        for scalar: Float in [2.5, -0.0, .nan] {
            let tensor = MLTensor(shape: [16], scalars: a, scalarType: Float.self)
            let constant = MLTensor(shape: [], scalars: [scalar], scalarType: Float.self)
            let right = tensor.binary(op, constant)
            let left = constant.binary(op, tensor)
            #expect(right.node.leafElements != nil && left.node.leafElements != nil)
            #expect(Self.bits(right) == Self.viaGraph(a) { $0.binary(op, constant) }, "x \(op) \(scalar)")
            #expect(Self.bits(left) == Self.viaGraph(a) { constant.binary(op, $0) }, "\(scalar) \(op) x")
        }
    }

    @Test("every unary op folds to the fused program's bits", arguments: UnaryOp.allCases)
    func unaryMatchesFused(_ op: UnaryOp) {
        for seed in [0, 4] {
            let a = Self.values(seed)
            let folded = MLTensor(shape: [16], scalars: a, scalarType: Float.self).unary(op)
            #expect(folded.node.leafElements != nil)
            #expect(Self.bits(folded) == Self.viaGraph(a) { $0.unary(op) }, "\(op) seed \(seed)")
        }
    }

    @Test("ops stay in the graph when an operand is pending, large, not Float, or needs a real broadcast")
    func whatDoesNotFold() {
        let x = MLTensor(shape: [4, 4], scalars: Self.values(2), scalarType: Float.self)
        let pending = MLTensor(.unary(.neg), [x])
        #expect((pending + x).node.leafElements == nil)
        #expect((x + MLTensor(shape: [4], scalars: [1, 2, 3, 4], scalarType: Float.self)).node.leafElements == nil)
        let ints = MLTensor(shape: [4], scalars: [1, 2, 3, 4] as [Int32], scalarType: Int32.self)
        #expect((ints + ints).node.leafElements == nil)
        #expect((x .< x).node.leafElements == nil)
        let large = MLTensor(repeating: 1, shape: [MLTensor.smallFoldingLimit + 1], scalarType: Float.self)
        #expect((large * 2).node.leafElements == nil)
        // The results agree with the folded ones all the same.
        #expect(
            (pending + x).shapedArray(of: Float.self) == (x.materialized().unary(.neg) + x).shapedArray(of: Float.self))
    }

    @Test("a tensor the executor materialized folds like a leaf, and a transposed view does not")
    func executorMaterializedOperand() {
        let x = MLTensor(shape: [4, 4], scalars: Self.values(5), scalarType: Float.self)
        let computed = MLTensor(.unary(.neg), [x]).materialized()
        #expect(computed.node.leafValue == nil && computed.node.value != nil)
        let y = computed * 2
        #expect(y.node.leafElements != nil)
        #expect(y.shapedArray(of: Float.self).scalars == Self.values(5).map { -$0 * 2 })
        let transposed = x.transposed().materialized()
        let z = transposed + 1
        #expect(z.shapedArray(of: Float.self) == (x.transposed() + 1).shapedArray(of: Float.self))
    }

    /// `op(tensor, other)` as the operators run it: the left operand handed over.
    static func reusing(_ tensor: consuming MLTensor, _ op: BinaryOp, _ other: MLTensor) -> MLTensor {
        tensor.binaryReusingStorage(op, other)
    }

    @Test("a temporary left operand is overwritten in place: same node, same bits as a new result")
    func temporaryReusedInPlace() {
        let x = MLTensor(shape: [16], scalars: Self.values(0), scalarType: Float.self)
        for op in [BinaryOp.add, .sub, .mul, .div] {
            var t = x * 3
            let identity = ObjectIdentifier(t.node)
            t = Self.reusing(consume t, op, MLTensor(shape: [], scalars: [0.75], scalarType: Float.self))
            #expect(ObjectIdentifier(t.node) == identity, "\(op) reuses the temporary's node")
            let expected = (x * 3).binary(op, MLTensor(shape: [], scalars: [0.75], scalarType: Float.self))
            #expect(Self.bits(t) == Self.bits(expected), "\(op)")
        }
        // Through the operators: a chain of temporaries gives the same bits as fresh results.
        var chained = x
        var fresh = x
        for _ in 0..<20 {
            chained = chained * 1.0001 + 0.0001
            fresh = fresh.binary(.mul, MLTensor(1.0001 as Float)).binary(.add, MLTensor(0.0001 as Float))
        }
        #expect(Self.bits(chained) == Self.bits(fresh))
    }

    @Test("a tensor still referenced elsewhere, or whose elements were handed out, is never overwritten")
    func sharedOperandsAreNotOverwritten() {
        let x = MLTensor(shape: [16], scalars: Self.values(2), scalarType: Float.self)
        let a = x * 2
        let before = Self.bits(a)
        var b = a
        b = (consume b) + 1
        #expect(Self.bits(a) == before, "a is still referenced, so a + 1 made a new tensor")
        #expect(Self.bits(b) == Self.values(2).map { ($0 * 2 + 1).bitPattern })
        // Elements shared with a shaped array: the array must keep its values.
        var c = x * 4
        let exported = c.shapedArray(of: Float.self)
        let exportedBits = exported.scalars.map(\.bitPattern)
        c = (consume c) + 1
        #expect(exported.scalars.map(\.bitPattern) == exportedBits)
        #expect(Self.bits(c) == Self.values(2).map { ($0 * 4 + 1).bitPattern })
        // A pending consumer keeps its input alive, so the input is not reused either.
        var d = x * 5
        let pending = MLTensor(.unary(.neg), [d])
        d = (consume d) - 1
        #expect(pending.shapedArray(of: Float.self).scalars == Self.values(2).map { -($0 * 5) })
        // Identities stay identities (`x * 1` is `x`, not a rounded copy).
        var e = x * 2
        let eNode = ObjectIdentifier(e.node)
        e = (consume e) * 1
        #expect(ObjectIdentifier(e.node) == eNode)
    }

    @Test("a one-element operand of any rank broadcasts; the result keeps the larger shape")
    func oneElementBroadcast() {
        let x = MLTensor(shape: [2, 8], scalars: Self.values(3), scalarType: Float.self)
        let one = MLTensor(shape: [1, 1], scalars: [0.5], scalarType: Float.self)
        let y = x * one
        #expect(y.node.leafElements != nil)
        #expect(y.shape == [2, 8])
        #expect(y.shapedArray(of: Float.self).scalars == Self.values(3).map { $0 * 0.5 })
        let z = one - x
        #expect(z.shape == [2, 8])
        #expect(z.shapedArray(of: Float.self).scalars == Self.values(3).map { 0.5 - $0 })
    }
}
