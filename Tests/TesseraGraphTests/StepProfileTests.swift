import TesseraKernels
import Testing

@testable import TesseraGraph

/// ``StepProfile``: the executor times every step of the plans run inside
/// ``GraphExecutor/withStepProfile(_:_:)-swift.type.method`` and names what each computes;
/// outside a scope nothing is recorded. Structural checks only (no timing thresholds).
@Suite("Executor: step profile")
struct StepProfileTests {
    /// conv2d (with a bias and ReLU) → flatten → matmul → scaled softmax → reshape: a plan with
    /// a convolution, a product, a softmax and a view.
    static func graph(seed: UInt64) -> Node {
        let x = constant(seededValues(1 * 3 * 8 * 8, seed: seed), [1, 3, 8, 8])
        let w = constant(seededValues(4 * 3 * 3 * 3, seed: seed + 1), [4, 3, 3, 3])
        let b = constant(seededValues(4, seed: seed + 2), [4])
        let conv = Node(.conv2d(Conv2DParameters(padding: (1, 1, 1, 1))), inputs: [x, w, b])
        let relu = Node(.binary(.max), inputs: [conv, constant([0], [])])
        let rows = Node(.reshape([4, 64]), inputs: [relu])
        let weight = constant(seededValues(64 * 10, seed: seed + 3), [64, 10])
        let product = Node(.matmul, inputs: [rows, weight])
        let scaled = Node(.binary(.mul), inputs: [product, constant([0.5], [])])
        let softmax = Node(.softmax(axis: 1), inputs: [scaled])
        return Node(.reshape([40]), inputs: [softmax])
    }

    @Test("every step of a profiled run is recorded with its kind, operation and path")
    func recordsSteps() throws {
        let profile = StepProfile()
        let output = Self.graph(seed: 1)
        let plan = GraphExecutor.describePlan([output])
        GraphExecutor.withStepProfile(profile) { GraphExecutor.materialize([output]) }
        let runs = profile.runs
        #expect(runs.count == 1)
        let run = try #require(runs.first)
        #expect(run.steps.count == plan.steps.count)
        #expect(run.steps.map(\.index) == Array(0..<run.steps.count))
        let kinds: Set = [
            "view", "fused", "kernel", "fusedReduce", "fusedSoftmax", "reduceConcat", "rowFused", "convEpilogue",
        ]
        for step in run.steps {
            #expect(kinds.contains(step.kind), "unknown step kind \(step.kind)")
            #expect(!step.operation.isEmpty && !step.path.isEmpty)
        }
        let operations = Set(run.steps.map(\.operation))
        #expect(operations.isSuperset(of: ["conv2d", "matmul", "softmax", "reshape"]), "\(operations)")
        let convPaths: Set = [
            "depthwise conv", "packed pointwise conv", "OpenBLAS pointwise conv (sgemm)", "packed im2col conv",
            "OpenBLAS im2col conv (sgemm)",
        ]
        let conv = try #require(run.steps.first { $0.operation == "conv2d" })
        // The ReLU runs inside the convolution's step.
        #expect(conv.kind == "convEpilogue")
        #expect(convPaths.contains(conv.path.replacingOccurrences(of: " + fused epilogue", with: "")), "\(conv.path)")
        #expect(conv.shape == [1, 4, 8, 8])
        let product = try #require(run.steps.first { $0.operation == "matmul" })
        #expect(
            ["OpenBLAS sgemm", "loop GEMM (tiny batched)", "packed GEMM (weights prepared once)"].contains(product.path)
        )
        // The steps run one after another inside the loop's time.
        let sum = run.steps.reduce(UInt64(0)) { $0 + $1.nanoseconds }
        #expect(sum <= run.nanoseconds)
    }

    @Test("nothing is recorded outside a scope, and each scope keeps its own runs")
    func scopes() {
        let profile = StepProfile()
        GraphExecutor.materialize([Self.graph(seed: 10)])
        #expect(profile.runs.isEmpty)
        let other = StepProfile()
        GraphExecutor.withStepProfile(profile) {
            GraphExecutor.materialize([Self.graph(seed: 20)])
            GraphExecutor.withStepProfile(other) { GraphExecutor.materialize([Self.graph(seed: 30)]) }
            GraphExecutor.materialize([Self.graph(seed: 40)])
        }
        GraphExecutor.materialize([Self.graph(seed: 50)])
        #expect(profile.runs.count == 2)
        #expect(other.runs.count == 1)
        profile.reset()
        #expect(profile.runs.isEmpty)
    }

    @Test("an async materialization inside a scope is recorded")
    func asyncScope() async {
        let profile = StepProfile()
        await GraphExecutor.withStepProfile(profile) { await GraphExecutor.materialize([Self.graph(seed: 60)]) }
        #expect(profile.runs.count == 1)
        #expect(profile.runs.first?.steps.isEmpty == false)
    }
}
