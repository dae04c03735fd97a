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

    /// `values` repeated to `lazyCount` elements, then sliced back after the op: the first
    /// `values.count` results of the fused program.
    /// (An identity such as `x * 1` returns its operand, which is materialized already.)
    static func viaGraph(_ values: [Float], identity: Bool = false, _ body: (MLTensor) -> MLTensor) -> [UInt32] {
        let repeated = (0..<lazyCount).map { values[$0 % values.count] }
        let result = body(MLTensor(shape: [lazyCount], scalars: repeated, scalarType: Float.self))
        #expect(result.isMaterialized == identity, "an op over \(lazyCount) elements must not fold")
        return Array(bits(result).prefix(values.count))
    }

    /// Whether `tensor` holds its elements inline (no node at all).
    static func isInline(_ tensor: MLTensor) -> Bool { tensor.storedNode == nil }

    /// Whether `tensor` is a node that owns elements it computed when it was built.
    static func isOwnedNode(_ tensor: MLTensor) -> Bool {
        guard let node = tensor.storedNode else { return false }
        return node.leafValue == nil && node.leafElements != nil
    }

    /// A tensor holding `values` inline, as a folded result would.
    static func inline(_ values: [Float], shape: [Int]) -> MLTensor {
        var elements = SIMD16<Float>.zero
        for (i, value) in values.enumerated() { elements[i] = value }
        return MLTensor(inline: InlineFloats(shape: shape, count: values.count, elements: elements)!)
    }

    /// `values` repeated four times: 64 elements, above the inline capacity and below the
    /// folding limit, so results are nodes that own their elements.
    static func leaf64(_ values: [Float]) -> MLTensor {
        MLTensor(shape: [64], scalars: (0..<64).map { values[$0 % values.count] }, scalarType: Float.self)
    }

    @Test("a chain on a materialized tensor is computed as it is built: nothing is left to run")
    func chainFolds() {
        var x = MLTensor(shape: [16], scalars: Self.values(1), scalarType: Float.self)
        for _ in 0..<10 { x = x * 1.0001 + 0.0001 }
        #expect(Self.isInline(x), "16 folded floats are held inline")
        let statistics = MLTensor.materialize([x])
        #expect(statistics.steps == 0)
        let expected = Self.values(1).map { value in
            var v = value
            for _ in 0..<10 { v = v * 1.0001 + 0.0001 }
            return v.bitPattern
        }
        #expect(Self.bits(x) == expected)
        var y = Self.leaf64(Self.values(1))
        for _ in 0..<10 { y = y * 1.0001 + 0.0001 }
        #expect(Self.isOwnedNode(y), "64 folded floats are a node that owns them")
        #expect(Array(Self.bits(y).prefix(16)) == expected)
    }

    @Test(
        "every float binary op folds to the fused program's bits, inline and in a node",
        arguments: BinaryOp.allCases.filter { !$0.producesBool })
    func binaryMatchesFused(_ op: BinaryOp) {
        for (lhsSeed, rhsSeed) in [(0, 1), (1, 0), (2, 3), (0, 0)] {
            let a = Self.values(lhsSeed)
            let b = Self.values(rhsSeed)
            let repeatedB = (0..<Self.lazyCount).map { b[$0 % b.count] }
            let lazy = Self.viaGraph(a) {
                $0.binary(op, MLTensor(shape: [Self.lazyCount], scalars: repeatedB, scalarType: Float.self))
            }
            // Leaves in, inline out (the kernels' block bodies).
            let fromLeaves = MLTensor(shape: [16], scalars: a, scalarType: Float.self)
                .binary(op, MLTensor(shape: [16], scalars: b, scalarType: Float.self))
            #expect(Self.isInline(fromLeaves), "\(op) on 16 materialized floats folds inline")
            #expect(Self.bits(fromLeaves) == lazy, "\(op) seeds \(lhsSeed), \(rhsSeed), leaves")
            // Inline in, inline out (vector arithmetic for + - * /, the kernels otherwise).
            let fromInline = Self.inline(a, shape: [4, 4]).binary(op, Self.inline(b, shape: [4, 4]))
            #expect(Self.isInline(fromInline) && fromInline.shape == [4, 4])
            #expect(Self.bits(fromInline) == lazy, "\(op) seeds \(lhsSeed), \(rhsSeed), inline")
            // 64 elements: a node that owns them.
            let owned = Self.leaf64(a).binary(op, Self.leaf64(b))
            #expect(Self.isOwnedNode(owned))
            #expect(Array(Self.bits(owned).prefix(16)) == lazy, "\(op) seeds \(lhsSeed), \(rhsSeed), 64")
        }
    }

    @Test(
        "a scalar operand on either side folds to the fused program's bits",
        arguments: [BinaryOp.add, .sub, .mul, .div, .pow, .max])
    func scalarOperand(_ op: BinaryOp) {
        let a = Self.values(0)
        for scalar: Float in [2.5, 1, -0.0, 0, .nan] {
            let constants = [
                MLTensor(shape: [], scalars: [scalar], scalarType: Float.self),
                Self.inline([scalar], shape: []),
                Self.inline([scalar], shape: [1]),
            ]
            for constant in constants {
                for tensor in [MLTensor(shape: [16], scalars: a, scalarType: Float.self), Self.inline(a, shape: [16])] {
                    let right = tensor.binary(op, constant)
                    let left = constant.binary(op, tensor)
                    // `x * 1`, `x - 0`, `x + (-0)`, `1 * x`, ... return `x` itself.
                    let rightIdentity = MLTensor.identityResult(op, tensor, constant) != nil
                    let leftIdentity = MLTensor.identityResult(op, constant, tensor) != nil
                    #expect(Self.isInline(right) == (Self.isInline(tensor) || !rightIdentity))
                    #expect(Self.isInline(left) == (Self.isInline(tensor) || !leftIdentity))
                    #expect(right.shape == [16] && left.shape == [16])
                    #expect(
                        Self.bits(right) == Self.viaGraph(a, identity: rightIdentity) { $0.binary(op, constant) },
                        "x \(op) \(scalar)")
                    #expect(
                        Self.bits(left) == Self.viaGraph(a, identity: leftIdentity) { constant.binary(op, $0) },
                        "\(scalar) \(op) x")
                }
            }
        }
    }

    @Test("every unary op folds to the fused program's bits", arguments: UnaryOp.allCases)
    func unaryMatchesFused(_ op: UnaryOp) {
        for seed in [0, 4] {
            let a = Self.values(seed)
            let lazy = Self.viaGraph(a) { $0.unary(op) }
            let folded = MLTensor(shape: [16], scalars: a, scalarType: Float.self).unary(op)
            #expect(Self.isInline(folded))
            #expect(Self.bits(folded) == lazy, "\(op) seed \(seed)")
            let fromInline = Self.inline(a, shape: [2, 8]).unary(op)
            #expect(Self.isInline(fromInline) && fromInline.shape == [2, 8])
            #expect(Self.bits(fromInline) == lazy, "\(op) seed \(seed), inline")
            let owned = Self.leaf64(a).unary(op)
            #expect(Self.isOwnedNode(owned))
            #expect(Array(Self.bits(owned).prefix(16)) == lazy, "\(op) seed \(seed), 64")
        }
    }

    @Test("ops stay in the graph when an operand is pending, large, not Float, or needs a real broadcast")
    func whatDoesNotFold() {
        let x = MLTensor(shape: [4, 4], scalars: Self.values(2), scalarType: Float.self)
        let pending = MLTensor(.unary(.neg), [x])
        #expect(!(pending + x).isMaterialized)
        #expect(!(x + MLTensor(shape: [4], scalars: [1, 2, 3, 4], scalarType: Float.self)).isMaterialized)
        #expect(!(Self.inline(Self.values(2), shape: [4, 4]) + Self.inline([1, 2, 3, 4], shape: [4])).isMaterialized)
        let ints = MLTensor(shape: [4], scalars: [1, 2, 3, 4] as [Int32], scalarType: Int32.self)
        #expect(!(ints + ints).isMaterialized)
        #expect(!(x .< x).isMaterialized)
        let large = MLTensor(repeating: 1, shape: [MLTensor.smallFoldingLimit + 1], scalarType: Float.self)
        #expect(!(large * 2).isMaterialized)
        // The results agree with the folded ones all the same.
        #expect(
            (pending + x).shapedArray(of: Float.self) == (x.materialized().unary(.neg) + x).shapedArray(of: Float.self))
        #expect(
            (Self.inline(Self.values(2), shape: [4, 4]) + Self.inline([1, 2, 3, 4], shape: [4]))
                .shapedArray(of: Float.self) == (x + MLTensor([1, 2, 3, 4] as [Float])).shapedArray(of: Float.self))
    }

    @Test("a shape above rank 8 folds into a node, not inline")
    func highRankIsNotInline() {
        let shape = [1, 1, 1, 1, 1, 1, 1, 2, 8]
        let x = MLTensor(shape: shape, scalars: Self.values(3), scalarType: Float.self)
        let y = x * 2 + 1
        #expect(Self.isOwnedNode(y))
        #expect(y.shape == shape)
        #expect(Self.bits(y) == Self.values(3).map { ($0 * 2 + 1).bitPattern })
    }

    @Test("a tensor the executor materialized folds like a leaf, and a transposed view does not")
    func executorMaterializedOperand() {
        let x = MLTensor(shape: [4, 4], scalars: Self.values(5), scalarType: Float.self)
        let computed = MLTensor(.unary(.neg), [x]).materialized()
        #expect(computed.node.leafValue == nil && computed.node.value != nil)
        let y = computed * 2
        #expect(Self.isInline(y))
        #expect(y.shapedArray(of: Float.self).scalars == Self.values(5).map { -$0 * 2 })
        let transposed = x.transposed().materialized()
        let z = transposed + 1
        #expect(z.shapedArray(of: Float.self) == (x.transposed() + 1).shapedArray(of: Float.self))
    }

    /// `op(tensor, other)` as the operators run it: the left operand handed over.
    static func reusing(_ tensor: consuming MLTensor, _ op: BinaryOp, _ other: MLTensor) -> MLTensor {
        tensor.binaryReusingStorage(op, other)
    }

    @Test("a temporary left operand that owns its elements is overwritten in place: same node, same bits")
    func temporaryReusedInPlace() {
        let x = Self.leaf64(Self.values(0))
        for op in [BinaryOp.add, .sub, .mul, .div] {
            var t = x * 3
            let identity = ObjectIdentifier(t.storedNode!)
            t = Self.reusing(consume t, op, MLTensor(shape: [], scalars: [0.75], scalarType: Float.self))
            #expect(ObjectIdentifier(t.storedNode!) == identity, "\(op) reuses the temporary's node")
            let expected = (x * 3).binary(op, MLTensor(shape: [], scalars: [0.75], scalarType: Float.self))
            #expect(Self.bits(t) == Self.bits(expected), "\(op)")
        }
        // Through the operators: a chain of temporaries gives the same bits as fresh results,
        // in nodes (64 elements) and inline (16).
        for start in [x, MLTensor(shape: [16], scalars: Self.values(0), scalarType: Float.self)] {
            var chained = start
            var fresh = start
            for _ in 0..<20 {
                chained = chained * 1.0001 + 0.0001
                fresh = fresh.binary(.mul, MLTensor(1.0001 as Float)).binary(.add, MLTensor(0.0001 as Float))
            }
            #expect(Self.bits(chained) == Self.bits(fresh))
        }
    }

    @Test("a tensor still referenced elsewhere, or whose elements were handed out, is never overwritten")
    func sharedOperandsAreNotOverwritten() {
        for x in [Self.leaf64(Self.values(2)), MLTensor(shape: [16], scalars: Self.values(2), scalarType: Float.self)] {
            let expected = { (f: (Float) -> Float) in Self.bits(x).map { f(Float(bitPattern: $0)).bitPattern } }
            let a = x * 2
            let before = Self.bits(a)
            var b = a
            b = (consume b) + 1
            #expect(Self.bits(a) == before, "a is still referenced, so a + 1 made a new tensor")
            #expect(Self.bits(b) == expected { $0 * 2 + 1 })
            // Elements shared with a shaped array: the array must keep its values.
            var c = x * 4
            let exported = c.shapedArray(of: Float.self)
            let exportedBits = exported.scalars.map(\.bitPattern)
            c = (consume c) + 1
            #expect(exported.scalars.map(\.bitPattern) == exportedBits)
            #expect(Self.bits(c) == expected { $0 * 4 + 1 })
            // A pending consumer keeps its input alive, so the input is not reused either.
            var d = x * 5
            let pending = MLTensor(.unary(.neg), [d])
            d = (consume d) - 1
            #expect(Self.bits(pending) == expected { -($0 * 5) })
            #expect(Self.bits(d) == expected { $0 * 5 - 1 })
        }
        // Identities stay identities (`x * 1` is `x`, not a rounded copy).
        var e = Self.leaf64(Self.values(2)) * 2
        let eNode = ObjectIdentifier(e.storedNode!)
        e = (consume e) * 1
        #expect(ObjectIdentifier(e.storedNode!) == eNode)
        let signalingNaN = Float(bitPattern: 0x7FA0_0001)
        let f = Self.inline([signalingNaN, -0.0, 3], shape: [3])
        for same in [f * 1, 1 * f, f / 1, f - 0, f + (-0.0), (-0.0) + f, f * Float(1)] {
            #expect(Self.bits(same) == Self.bits(f), "an identity returns the operand's bits, NaN payload included")
        }
    }

    @Test("a one-element operand of any rank broadcasts; the result keeps the larger shape")
    func oneElementBroadcast() {
        let leaf = MLTensor(shape: [2, 8], scalars: Self.values(3), scalarType: Float.self)
        for x in [leaf, Self.inline(Self.values(3), shape: [2, 8])] {
            for one in [
                MLTensor(shape: [1, 1], scalars: [0.5], scalarType: Float.self), Self.inline([0.5], shape: [1, 1]),
            ] {
                let y = x * one
                #expect(Self.isInline(y))
                #expect(y.shape == [2, 8])
                #expect(y.shapedArray(of: Float.self).scalars == Self.values(3).map { $0 * 0.5 })
                let z = one - x
                #expect(z.shape == [2, 8])
                #expect(z.shapedArray(of: Float.self).scalars == Self.values(3).map { 0.5 - $0 })
            }
        }
        // A one-element operand of higher rank broadcasts through the graph, as NumPy does.
        let row = Self.inline(Self.values(3), shape: [16])
        let widened = row + Self.inline([1], shape: [1, 1])
        #expect(widened.shape == [1, 16])
        #expect(widened.shapedArray(of: Float.self).scalars == Self.values(3).map { $0 + 1 })
        let scalar = Self.inline([2], shape: []) * Self.inline([3], shape: [1, 1])
        #expect(Self.isInline(scalar) && scalar.shape == [1, 1] && scalar.shapedArray(of: Float.self).scalars == [6])
    }

    @Test("inline tensors read, print, bridge and feed graph ops like any materialized tensor")
    func inlineTensorsBehaveLikeLeaves() {
        let values: [Float] = [1, -2, 3.5, 4, 0.25, 6]
        let x = Self.inline(values, shape: [2, 3])
        #expect(x.shape == [2, 3] && x.rank == 2 && x.scalarCount == 6 && x.scalarType is Float.Type)
        #expect(x.isMaterialized && !x.isScalar)
        #expect(x.materialized().shape == [2, 3])
        #expect(x.scalars(of: Float.self) == values)
        #expect(x.scalars(of: Int32.self) == [1, -2, 3, 4, 0, 6])
        #expect(x.shapedArray(of: Float16.self).scalars == values.map { Float16($0) })
        #expect(x.description == MLTensor(shape: [2, 3], scalars: values, scalarType: Float.self).description)
        let statistics = MLTensor.materialize([x, x])
        #expect(statistics.steps == 0)
        // As an input to ops that run in the graph.
        let leaf = MLTensor(shape: [2, 3], scalars: values, scalarType: Float.self)
        #expect(x.sum(alongAxes: 1).shapedArray(of: Float.self) == leaf.sum(alongAxes: 1).shapedArray(of: Float.self))
        #expect(
            x.matmul(x.transposed()).shapedArray(of: Float.self)
                == leaf.matmul(leaf.transposed()).shapedArray(of: Float.self))
        #expect(
            MLTensor(concatenating: [x, leaf], alongAxis: 0).shapedArray(of: Float.self)
                == MLTensor(concatenating: [leaf, leaf], alongAxis: 0).shapedArray(of: Float.self))
        #expect(x.cast(to: Int32.self).shapedArray(of: Int32.self).scalars == [1, -2, 3, 4, 0, 6])
        #expect((x .> 2).scalars(of: Bool.self) == values.map { $0 > 2 })
    }

    @Test("inline tensors are read asynchronously and used from many tasks at once")
    func inlineTensorsAcrossTasks() async {
        let values: [Float] = [1, -2, 3.5, 4, 0.25, 6]
        let x = Self.inline(values, shape: [2, 3])
        let array = await x.shapedArray(of: Float.self)
        #expect(array.scalars == values)
        let sums = await withTaskGroup(of: [Float].self) { group in
            for k in 0..<16 {
                group.addTask { await (x * Float(k) + 1).sum().scalars(of: Float.self) }
            }
            return await group.reduce(into: []) { $0 += $1 }
        }
        #expect(Set(sums) == Set((0..<16).map { k in values.map { $0 * Float(k) + 1 }.reduce(0, +) }))
    }

    @Test("a Float literal is inline and still takes the type of the tensor it meets")
    func literalsAreInline() {
        let literal: MLTensor = 2.5
        #expect(Self.isInline(literal) && literal.literal == 2.5 && literal.scalarType is Float.Type)
        let half = MLTensor(shape: [2], scalars: [1, 2], scalarType: Float16.self)
        let product = half * 2.5
        #expect(product.scalarType is Float16.Type)
        #expect(product.shapedArray(of: Float16.self).scalars == [2.5, 5])
        // A rank-0 constant used in the graph is one shared node, so a loop names one constant.
        let a: MLTensor = 0.125
        let b: MLTensor = 0.125
        #expect(a.node === b.node)
        #expect(Self.inline([0.125], shape: []).node === a.node)
    }
}
