import TesseraKernels
import Testing

@testable import TesseraGraph

/// ``ConvolutionEpilogueFusion`` on matrix products: a linear layer's bias (one value per
/// column) and activation, or a result-shaped residual, run inside the `matmul` step, on the
/// right-packed kernel for a weight in adopted memory and after OpenBLAS otherwise.
@Suite("Planner: matmul epilogues")
struct MatMulEpilogueTests {
    /// A constant whose storage adopts memory nobody writes, as a loaded model's weights are.
    static func adoptedConstant(_ scalars: [Float], _ shape: [Int]) -> Node {
        let owned = TensorStorage.allocateUnpooled(byteCount: scalars.count * 4, zeroed: false)
        scalars.withUnsafeBytes { owned.pointer.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
        let adopted = TensorStorage(
            adopting: owned.pointer, byteCount: owned.byteCount, release: { withExtendedLifetime(owned) {} })
        return Node(value: TensorValue(storage: adopted, layout: StridedLayout(contiguous: shape), type: .float32))
    }

    /// `x [2, m, k]` (a NaN in it), `W [n, k]` seen transposed, `bias [n]`, a residual `[2, m, n]`.
    static func operands(m: Int, n: Int, k: Int, adopted: Bool) -> (x: Node, wT: Node, bias: Node, residual: Node) {
        var x = (0..<(2 * m * k)).map { Float(($0 * 37) % 23) / 7 - 1.5 }
        x[4] = .nan
        let w = (0..<(n * k)).map { Float(($0 * 11) % 13) / 6 - 1 }
        let weight = adopted ? adoptedConstant(w, [n, k]) : constant(w, [n, k])
        let bias = (0..<n).map { Float($0 % 5) - 2 }
        let residual = (0..<(2 * m * n)).map { Float(($0 * 29) % 17) / 5 - 1.7 }
        return (
            constant(x, [2, m, k]), Node(.permute([1, 0]), inputs: [weight]), constant(bias, [n]),
            constant(residual, [2, m, n])
        )
    }

    /// The epilogues a linear layer meets: bias, bias then ReLU (bias on either side), a
    /// result-shaped residual then ReLU, the bias then a residual connection (either way round,
    /// and clamped).
    static func epilogues(_ product: Node, _ bias: Node, _ residual: Node) -> [(name: String, node: Node)] {
        let zero = constant([0], [])
        return [
            ("y + b", Node(.binary(.add), inputs: [product, bias])),
            ("relu(y + b)", Node(.binary(.max), inputs: [Node(.binary(.add), inputs: [product, bias]), zero])),
            (
                "relu(b + y), bound on the left",
                Node(.binary(.max), inputs: [zero, Node(.binary(.add), inputs: [bias, product])])
            ),
            ("relu(y + r)", Node(.binary(.max), inputs: [Node(.binary(.add), inputs: [product, residual]), zero])),
            ("min(y, 0.5)", Node(.binary(.min), inputs: [product, constant([0.5], [])])),
            ("(y + b) + r", Node(.binary(.add), inputs: [Node(.binary(.add), inputs: [product, bias]), residual])),
            ("r + (b + y)", Node(.binary(.add), inputs: [residual, Node(.binary(.add), inputs: [bias, product])])),
            (
                "min((y + b) + r, 0.5)",
                Node(
                    .binary(.min),
                    inputs: [
                        Node(.binary(.add), inputs: [Node(.binary(.add), inputs: [product, bias]), residual]),
                        constant([0.5], []),
                    ])
            ),
        ]
    }

    @Test("matmul then bias/residual and clamp runs as one step with the unfused result's bits")
    func fusesBitForBit() {
        for adopted in [false, true] {
            for (m, n, k) in [(3, 5, 4), (9, 70, 33)] {
                for index in 0..<8 {
                    let (x, wT, bias, residual) = Self.operands(m: m, n: n, k: k, adopted: adopted)
                    let product = Node(.matmul, inputs: [x, wT])
                    let (name, fused) = Self.epilogues(product, bias, residual)[index]
                    let label = "\(name) \(m)×\(n)×\(k) adopted \(adopted)"
                    let expected = NaiveGraph.evaluate(fused)
                    let stats = GraphExecutor.materialize([fused])
                    #expect(stats.convEpilogues == 1 && stats.fusedGroups == 0, "\(label): \(stats)")
                    expectClose(elements(fused), expected, Comment(rawValue: label))
                    // Unfused: the product is requested too, so the epilogue is a fused program.
                    let plainProduct = Node(.matmul, inputs: [x, wT])
                    let plain = Self.epilogues(plainProduct, bias, residual)[index].node
                    let plainStats = GraphExecutor.materialize([plain, plainProduct])
                    #expect(plainStats.convEpilogues == 0, "\(label): \(plainStats)")
                    let (got, unfused) = (floats(fused), floats(plain))
                    #expect(got.map(\.bitPattern) == unfused.map(\.bitPattern), "\(label): \(got) vs \(unfused)")
                    #expect(got.contains { $0.isNaN }, "\(label)")
                }
            }
        }
    }

    @Test("not fused: (y + r) + b, whose float sums run in another order than the kernel's")
    func residualBeforeBiasNotFused() {
        let (x, wT, bias, residual) = Self.operands(m: 3, n: 5, k: 4, adopted: true)
        let product = Node(.matmul, inputs: [x, wT])
        let y = Node(.binary(.add), inputs: [Node(.binary(.add), inputs: [product, residual]), bias])
        let stats = GraphExecutor.materialize([y])
        #expect(stats.convEpilogues == 0, "\(stats)")
        expectClose(elements(y), NaiveGraph.evaluate(y), "(y + r) + b")
    }

    @Test("not fused: a bias that is not one value per column")
    func perRowBiasNotFused() {
        let (x, wT, _, _) = Self.operands(m: 3, n: 5, k: 4, adopted: false)
        let product = Node(.matmul, inputs: [x, wT])
        let perRow = Node(.binary(.add), inputs: [product, constant([1, 2, 3], [3, 1])])
        let stats = GraphExecutor.materialize([perRow])
        #expect(stats.convEpilogues == 0, "\(stats)")
        expectClose(elements(perRow), NaiveGraph.evaluate(perRow), "per-row bias")
    }

    @Test("column biases: [n] and [1, …, 1, n] of at most the result's rank")
    func columnBiasShapes() {
        #expect(ConvolutionEpilogueFusion.isColumnBias([5], of: [2, 3, 5]))
        #expect(ConvolutionEpilogueFusion.isColumnBias([1, 1, 5], of: [2, 3, 5]))
        #expect(!ConvolutionEpilogueFusion.isColumnBias([3, 5], of: [2, 3, 5]))
        #expect(!ConvolutionEpilogueFusion.isColumnBias([1, 1, 1, 5], of: [2, 3, 5]))
        #expect(!ConvolutionEpilogueFusion.isColumnBias([3, 1], of: [2, 3, 5]))
    }
}
