import Testing

@testable import TesseraGraph
@testable import TesseraKernels

/// Each graph op's family (`GraphOp.rule`) gives its kind, and its rule names the graph op
/// and checks at build time what its kernel would otherwise trap on when it runs.
@Suite("Graph op rules")
struct OpRuleTests {
    /// One op of every case, with the kind its family declares.
    static let kinds: [(GraphOp, OpKind)] = [
        (.constant, .leaf),
        (.unary(.exp), .elementwise),
        (.binary(.add), .elementwise),
        (.select, .elementwise),
        (.cast(.int32), .elementwise),
        (.reduce(.sum, axes: [0]), .kernel),
        (.softmax(axis: 0), .kernel),
        (.logSoftmax(axis: 0), .kernel),
        (.scan(product: false, axis: 0, exclusive: false, reverse: false), .kernel),
        (.matmul, .kernel),
        (.reshape([1]), .view),
        (.broadcast([1]), .view),
        (.permute([0]), .view),
        (.slice(starts: [0], steps: [1], counts: [1]), .view),
        (.concat(axis: 0), .kernel),
        (.pad(before: [0], after: [0], mode: .edge), .kernel),
        (.gather(axis: 0), .kernel),
        (.tile([1]), .kernel),
        (.conv2d(Conv2DParameters()), .kernel),
        (.maxPool2d(Pool2DParameters(kernel: (1, 1))), .kernel),
        (.averagePool2d(Pool2DParameters(kernel: (1, 1)), countIncludePad: false), .kernel),
        (.argsort(axis: 0, descending: false, count: 1), .kernel),
        (.gatherElements(axis: 0), .kernel),
        (.gatherND, .kernel),
        (.scatter(axis: 0), .kernel),
        (.resize(height: 1, width: 1, method: .nearest), .kernel),
        (.multinomial(samples: 1, lenient: false), .kernel), (.multinomial(samples: 1, lenient: true), .kernel),
        (.nonMaximumSuppression(iouThreshold: 0.5, scoreThreshold: 0, maxOutputCount: 1), .kernel),
    ]

    @Test("every op's family declares its kind; isElementwise and isView follow it")
    func kinds() {
        for (op, kind) in Self.kinds {
            #expect(op.rule.kind == kind, "\(op)")
            #expect(op.isElementwise == (kind == .elementwise) && op.isView == (kind == .view), "\(op)")
        }
    }

    /// The first error building `op` on `inputs` inside a checking scope.
    private func error(_ op: GraphOp, _ inputs: [Node]) -> String? {
        ShapeChecks.withRecording { Node(op, inputs: inputs) }.1?.message
    }

    private let matrix = constant([1, 2, 3, 4, 5, 6], [2, 3])

    @Test("graph rules name the graph op, not the tensor method that built it")
    func graphOpNames() {
        #expect(error(.permute([0, 0]), [matrix]) == "[permute] [0, 0] is not a permutation of the axes of [2, 3]")
        #expect(
            error(.argsort(axis: 1, descending: true, count: 4), [matrix])
                == "[argsort] count 4 is outside 0...3 for axis 1 of shape [2, 3]")
        #expect(error(.gatherND, [matrix, matrix]) == "[gatherND] indices must be int32, got float32 [2, 3]")
        #expect(
            error(.scatter(axis: 0), [matrix, matrix, matrix]) == "[scatter] indices must be int32, got float32 [2, 3]")
        #expect(
            error(.resize(height: 0, width: 2, method: .nearest), [matrix])
                == "[resize] needs rank ≥ 2 and a positive size, got [2, 3] to 0×2")
    }

    @Test("padding that the kernel would refuse is refused when the node is built")
    func padding() {
        #expect(
            error(.pad(before: [0, -1], after: [0, 0], mode: .constant(0)), [matrix])
                == "[pad] negative padding (-1, 0) on axis 1 of shape [2, 3]")
        #expect(
            error(.pad(before: [0, 3], after: [0, 0], mode: .reflect), [matrix])
                == "[pad] reflect padding (3, 0) must be less than the size 3 of axis 1 of shape [2, 3]")
        #expect(error(.pad(before: [0, 3], after: [0, 3], mode: .symmetric), [matrix]) == nil)
    }

    @Test("resize checks the scalar type and an empty image when the node is built")
    func resizeTypes() {
        let (node, _) = ShapeChecks.withRecording {
            Node(.cast(.int32), inputs: [constant([Float](repeating: 1, count: 4), [1, 1, 2, 2])])
        }
        #expect(
            error(.resize(height: 4, width: 4, method: .nearest), [node!])
                == "[resize] needs a float32 or float64 tensor, got int32 [1, 1, 2, 2]")
        #expect(
            error(.resize(height: 4, width: 4, method: .nearest), [constant([], [1, 0, 2])])
                == "[resize] cannot resize an empty image [1, 0, 2] to 4×4")
    }

    @Test("a slice with a negative count is refused")
    func sliceCount() {
        #expect(
            error(.slice(starts: [0, 0], steps: [1, 1], counts: [2, -1]), [matrix])
                == "[slice] negative count in [2, -1] for shape [2, 3]")
    }
}

extension OpRuleTests {
    @Test("a shape whose element count overflows is refused, not a crash")
    func overflowingShapes() {
        let huge = Int.max / 2
        #expect(
            error(.reshape([huge, 4]), [constant([1, 2, 3, 4], [4])])
                == "[reshape[\(huge), 4]] shape [\(huge), 4] has more elements than an Int can count")
        #expect(
            error(.tile([1, Int.max]), [constant([1, 2, 3, 4], [2, 2])])
                == "[tile] multiples [1, \(Int.max)] overflow the size of [2, 2]")
        #expect(
            error(.tile([huge, 1]), [constant([1, 2, 3, 4], [2, 2])])
                == "[tile[\(huge), 1]] shape [\(2 * huge), 2] has more elements than an Int can count")
        #expect(
            error(.broadcast([huge, huge]), [constant([1], [1])])
                == "[broadcast[\(huge), \(huge)]] shape [\(huge), \(huge)] has more elements than an Int can count")
    }
}

extension OpRuleTests {
    /// A load spreads its preparations by the size of the forms they write: a 3×3 weight that
    /// runs by Winograd F(4,3) writes 36 values for every 9, F(2,3) 16; a pointwise weight packs
    /// its own size; a depthwise one prepares nothing; a matmul's constant counts its elements.
    @Test("a weight's preparation cost is the size of the form it prepares")
    func preparationCost() throws {
        try #require(PackedGEMM.isAvailable, "Winograd and the packed panels need AVX2 + FMA")
        func weight(_ shape: [Int]) -> TensorValue {
            constant([Float](repeating: 0.5, count: shape.reduce(1, *)), shape).value!
        }
        let pad1 = GraphOp.conv2d(Conv2DParameters(padding: (1, 1, 1, 1)))
        func cost(_ op: GraphOp, input: [Int], weight shape: [Int]) -> Int {
            op.rule.preparationCost(op, operands: [nil, weight(shape)], shapes: [input, shape])
        }
        #expect(cost(pad1, input: [1, 64, 56, 56], weight: [64, 64, 3, 3]) == 64 * 64 * 36)
        #expect(cost(pad1, input: [1, 512, 7, 7], weight: [512, 512, 3, 3]) == 512 * 512 * 16)
        #expect(cost(.conv2d(Conv2DParameters()), input: [1, 64, 56, 56], weight: [256, 64, 1, 1]) == 256 * 64)
        let depthwise = GraphOp.conv2d(Conv2DParameters(padding: (1, 1, 1, 1), groups: 64))
        #expect(cost(depthwise, input: [1, 64, 56, 56], weight: [64, 1, 3, 3]) == 0)
        let matmul = GraphOp.matmul
        #expect(
            matmul.rule.preparationCost(
                matmul, operands: [nil, weight([768, 3072])], shapes: [[128, 768], [768, 3072]])
                == 768 * 3072)
    }
}
