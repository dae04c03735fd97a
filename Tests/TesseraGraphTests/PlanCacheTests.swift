import TesseraGraph
import TesseraKernels
import Testing

/// The plan cache, each test in a cache of its own (`GraphExecutor.withPlanCache`), so tests
/// running in parallel cannot fill or empty it in between: a miss is a failure, never retried.
@Suite("Plan cache")
struct PlanCacheTests {
    /// Layer normalization over axis 1 of a `[2, 4]` input.
    static func layerNorm(_ x: Node) -> Node {
        let mean = Node(.reduce(.mean, axes: [1]), inputs: [x])
        let c = Node(.binary(.sub), inputs: [x, mean])
        let variance = Node(.reduce(.mean, axes: [1]), inputs: [Node(.binary(.mul), inputs: [c, c])])
        let eps = constant([1e-5], [])
        let denominator = Node(.unary(.sqrt), inputs: [Node(.binary(.add), inputs: [variance, eps])])
        return Node(.binary(.div), inputs: [c, denominator])
    }

    @Test("layer norm: the plan is compiled once and reused for new inputs of the same shapes")
    func reusedByStructure() {
        let data: [Float] = [1, 2, 3, 4, 10, 20, 30, 40]
        let y = Self.layerNorm(constant(data, [2, 4]))
        // One row-fused step: the mean, c·c streamed into the variance, and one program for
        // c / sqrt(variance + eps) (c, read only by programs, is recomputed inside each).
        let plan = GraphExecutor.describePlan([y])
        #expect(plan.steps == [.rowFused] && plan.fusedNodes == 6, "\(plan)")
        let (first, second, count) = GraphExecutor.withPlanCache {
            let first = GraphExecutor.materialize([y])
            let second = GraphExecutor.materialize([Self.layerNorm(constant(data.map { $0 * 2 }, [2, 4]))])
            return (first, second, GraphExecutor.cachedPlanCount)
        }
        #expect(!first.planCacheHit && second.planCacheHit && count == 1, "\(first) / \(second)")
        #expect(first.kernels == 1, "\(first)")
        let row: [Float] = [-1.3416, -0.4472, 0.4472, 1.3416]
        for (a, b) in zip(floats(y), row + row) { #expect(abs(a - b) < 1e-3) }
    }

    @Test("another shape or another structure is another plan")
    func otherShapesMiss() {
        GraphExecutor.withPlanCache {
            GraphExecutor.materialize([Self.layerNorm(constant(seededValues(8, seed: 70), [2, 4]))])
            let wider = GraphExecutor.materialize([Self.layerNorm(constant(seededValues(10, seed: 71), [2, 5]))])
            #expect(!wider.planCacheHit)
            let x = constant(seededValues(8, seed: 72), [2, 4])
            let other = GraphExecutor.materialize([Node(.binary(.mul), inputs: [Self.layerNorm(x), x])])
            #expect(!other.planCacheHit && GraphExecutor.cachedPlanCount == 3)
        }
    }

    @Test("a scope starts empty and keeps its plans to itself")
    func scopesAreIsolated() {
        let data = seededValues(8, seed: 73)
        GraphExecutor.materialize([Self.layerNorm(constant(data, [2, 4]))])  // the process-wide cache
        GraphExecutor.withPlanCache {
            let inner = GraphExecutor.materialize([Self.layerNorm(constant(data, [2, 4]))])
            #expect(!inner.planCacheHit)
            GraphExecutor.withPlanCache {
                #expect(GraphExecutor.cachedPlanCount == 0)
                #expect(!GraphExecutor.materialize([Self.layerNorm(constant(data, [2, 4]))]).planCacheHit)
            }
            #expect(GraphExecutor.cachedPlanCount == 1)
        }
    }

    @Test("the asynchronous materialize uses the scope of the task that calls it")
    func asyncUsesTheScope() async {
        let data = seededValues(8, seed: 74)
        let (first, second) = await GraphExecutor.withPlanCache {
            let first = await GraphExecutor.materialize([Self.layerNorm(constant(data, [2, 4]))])
            let second = await GraphExecutor.materialize([Self.layerNorm(constant(data, [2, 4]))])
            return (first, second)
        }
        #expect(!first.planCacheHit && second.planCacheHit)
    }
}
