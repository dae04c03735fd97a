import TesseraKernels
import Testing

@testable import TesseraGraph

/// ``LinearActivationFusion``: `gelu` (erf and tanh forms) and `silu` of a linear layer's
/// `x · Wᵀ + b`, built as `MLTensor.gelu(approximation:)` and `MLTensor.silu()` build them, run
/// inside the `matmul` step — on the right-packed kernel for a weight in adopted memory, after
/// OpenBLAS otherwise — and match the unfused element-wise ops.
@Suite("Planner: matmul activation epilogues")
struct LinearActivationFusionTests {
    static func scalar(_ value: Float) -> Node { constant([value], []) }
    static func mul(_ a: Node, _ b: Node) -> Node { Node(.binary(.mul), inputs: [a, b]) }
    static func add(_ a: Node, _ b: Node) -> Node { Node(.binary(.add), inputs: [a, b]) }

    /// The activations as `MLTensor+Activation.swift` writes them, with `half` in place of 0.5.
    static func activations(half: Float = 0.5) -> [(name: String, apply: (Node) -> Node)] {
        [
            (
                "gelu",
                { x in
                    mul(
                        mul(x, scalar(half)),
                        add(Node(.unary(.erf), inputs: [mul(x, scalar(0.707_106_781_186_547_5))]), scalar(1)))
                }
            ),
            (
                "gelu tanh",
                { x in
                    let inner = mul(add(x, mul(mul(mul(x, x), x), scalar(0.044715))), scalar(0.797_884_560_802_865_4))
                    return mul(mul(x, scalar(half)), add(Node(.unary(.tanh), inputs: [inner]), scalar(1)))
                }
            ),
            ("silu", { x in mul(x, Node(.unary(.sigmoid), inputs: [x])) }),
        ]
    }

    /// `x [2, m, k]` in [-3, 3] (beyond erf's Taylor range and into both tails), `W [n, k]`
    /// seen transposed, `bias [n]`.
    static func operands(m: Int, n: Int, k: Int, adopted: Bool) -> (x: Node, wT: Node, bias: Node) {
        let x = (0..<(2 * m * k)).map { Float(($0 * 37) % 23) / 7 - 1.5 }
        let w = (0..<(n * k)).map { Float(($0 * 11) % 13) / 6 - 1 }
        let weight = adopted ? MatMulEpilogueTests.adoptedConstant(w, [n, k]) : constant(w, [n, k])
        let bias = (0..<n).map { Float($0 % 5) - 2 }
        return (constant(x, [2, m, k]), Node(.permute([1, 0]), inputs: [weight]), constant(bias, [n]))
    }

    @Test("act(x · Wᵀ + b) and act(x · Wᵀ) run as one step and match the unfused ops")
    func fuses() {
        for adopted in [false, true] {
            for (m, n, k) in [(3, 5, 4), (9, 70, 33), (17, 100, 64)] {
                for index in 0..<3 {
                    for withBias in [true, false] {
                        let (x, wT, bias) = Self.operands(m: m, n: n, k: k, adopted: adopted)
                        let product = Node(.matmul, inputs: [x, wT])
                        let (name, apply) = Self.activations()[index]
                        let fused = apply(withBias ? Self.add(product, bias) : product)
                        let label = "\(name) \(m)×\(n)×\(k) bias \(withBias) adopted \(adopted)"
                        let expected = NaiveGraph.evaluate(fused)
                        let stats = GraphExecutor.materialize([fused])
                        #expect(stats.convEpilogues == 1 && stats.fusedGroups == 0, "\(label): \(stats)")
                        expectClose(elements(fused), expected, Comment(rawValue: label))
                        // Unfused: the product is requested too, so the activation is a fused program.
                        let plainProduct = Node(.matmul, inputs: [x, wT])
                        let plain = apply(withBias ? Self.add(plainProduct, bias) : plainProduct)
                        let plainStats = GraphExecutor.materialize([plain, plainProduct])
                        #expect(plainStats.convEpilogues == 0, "\(label): \(plainStats)")
                        let (got, unfused) = (floats(fused), floats(plain))
                        let worst = zip(got, unfused).map { abs($0 - $1) / Swift.max(1, abs($1)) }.max() ?? 0
                        #expect(worst <= 4e-7, "\(label): differs from the unfused ops by \(worst)")
                    }
                }
            }
        }
    }

    @Test("not fused: the pre-activation value has another reader")
    func preActivationReadElsewhereNotFused() {
        let (x, wT, bias) = Self.operands(m: 9, n: 70, k: 33, adopted: true)
        for (name, apply) in Self.activations() {
            let product = Node(.matmul, inputs: [x, wT])
            let preActivation = Self.add(product, bias)
            let activated = apply(preActivation)
            let stats = GraphExecutor.materialize([activated, preActivation])
            // The bias still fuses into the product (ConvolutionEpilogueFusion); the activation
            // stays a program of its own.
            #expect(stats.convEpilogues == 1 && stats.fusedGroups == 1, "\(name): \(stats)")
            expectClose(elements(activated), NaiveGraph.evaluate(activated), Comment(rawValue: name))
        }
    }

    @Test("a constant other than the activation's: the plan's step runs the product, then the program")
    func otherConstantRunsUnfused() {
        let (x, wT, bias) = Self.operands(m: 9, n: 70, k: 33, adopted: true)
        for (name, apply) in Self.activations(half: 0.625).prefix(2) {
            let activated = apply(Self.add(Node(.matmul, inputs: [x, wT]), bias))
            let stats = GraphExecutor.materialize([activated])
            #expect(stats.convEpilogues == 1, "\(name): \(stats)")
            expectClose(elements(activated), NaiveGraph.evaluate(activated), Comment(rawValue: name))
        }
    }

    @Test("readings: every activation's expression, operands either way round")
    func readings() {
        // gelu with the commutative operands swapped: (erf(c · t) + 1) · (0.5 · t), t = b + y.
        let program = FusedProgram(
            computeType: .float32,
            instructions: [
                .input(0), .input(1), .binary(.add, 1, 0), .input(2), .binary(.mul, 3, 2), .unary(.erf, 4),
                .input(3), .binary(.add, 6, 5), .input(4), .binary(.mul, 8, 2), .binary(.mul, 7, 9),
            ], outputs: [10])
        let found = LinearActivationFusion.readings(of: program)
        #expect(found.contains { $0.activation == .geluExact && $0.product == 0 && $0.bias == 1 })
        #expect(found.contains { $0.activation == .geluExact && $0.product == 1 && $0.bias == 0 })
        #expect(found.allSatisfy { $0.constants.count == 3 })
        // x · sigmoid(y) is not silu.
        let other = FusedProgram(
            computeType: .float32,
            instructions: [.input(0), .input(1), .unary(.sigmoid, 1), .binary(.mul, 0, 2)], outputs: [3])
        #expect(LinearActivationFusion.readings(of: other).isEmpty)
    }
}
