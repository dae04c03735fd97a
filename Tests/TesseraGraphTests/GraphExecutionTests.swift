import Foundation
import Synchronization
import TesseraGraph
import TesseraKernels
import Testing

/// Running plans: long graphs, and materializations from many threads at once.
@Suite("Graph execution")
struct GraphExecutionTests {
    @Test("a 100,000-op chain builds, runs and frees")
    func longChain() {
        var x = constant([1, 2, 3, 4], [4])
        let one = constant([1], [])
        for _ in 0..<100_000 { x = Node(.binary(.add), inputs: [x, one]) }
        GraphExecutor.materialize([x])
        #expect(floats(x) == [100_001, 100_002, 100_003, 100_004])
        var y = constant([0], [1])
        for _ in 0..<100_000 { y = Node(.unary(.neg), inputs: [y]) }
        _ = y  // dropped unmaterialized at scope end
    }
}

@Suite("Graph concurrency")
struct GraphConcurrencyTests {
    @Test("64 tasks materialize graphs sharing a subgraph and all get correct results")
    func sharedSubgraph() async {
        let x = constant((0..<1000).map(Float.init), [1000])
        let shared = Node(.unary(.square), inputs: [Node(.binary(.add), inputs: [x, constant([1], [])])])
        let results = await withTaskGroup(of: (Int, [Float]).self) { group in
            for k in 0..<64 {
                group.addTask {
                    let y = Node(.binary(.mul), inputs: [shared, constant([Float(k)], [])])
                    await GraphExecutor.materialize([y])
                    return (k, floats(y))
                }
            }
            var all: [(Int, [Float])] = []
            for await result in group { all.append(result) }
            return all
        }
        #expect(results.count == 64)
        for (k, values) in results {
            let expected: [Float] = (0..<1000).map { (i: Int) -> Float in Float((i + 1) * (i + 1)) * Float(k) }
            #expect(values == expected)
        }
    }

    @Test("threads materializing consumers of one pending subgraph at once run in parallel and agree")
    func concurrentRunsOfSharedPendingGraphs() {
        // Plans run outside the executor's lock: a shared pending node may be computed by
        // several threads, or materialized by one while another is collecting it.
        let a = constant((0..<(32 * 48)).map { Float($0 % 17) / 8 - 1 }, [32, 48])
        let b = constant((0..<(48 * 16)).map { Float($0 % 13) / 6 - 1 }, [48, 16])
        func consumer(_ shared: Node, _ k: Int) -> Node {
            let scaled = Node(.binary(.mul), inputs: [shared, constant([Float(k + 1)], [])])
            return k % 2 == 0
                ? Node(.reduce(.sum, axes: [1]), inputs: [scaled]) : Node(.softmax(axis: 1), inputs: [scaled])
        }
        func sharedGraph() -> Node {
            Node(.unary(.tanh), inputs: [Node(.matmul, inputs: [a, b])])
        }
        // Serial reference values, one per consumer kind.
        let reference = (0..<8).map { k -> [Float] in
            let y = consumer(sharedGraph(), k)
            GraphExecutor.materialize([y])
            return floats(y)
        }
        let results = Mutex<[[Float]?]>(Array(repeating: nil, count: 8))
        for _ in 0..<50 {
            let shared = sharedGraph()
            let consumers = (0..<8).map { consumer(shared, $0) }
            DispatchQueue.concurrentPerform(iterations: 8) { k in
                GraphExecutor.materialize([consumers[k]])
                let values = floats(consumers[k])
                results.withLock { $0[k] = values }
            }
            let round = results.withLock { $0 }
            for k in 0..<8 { #expect(round[k] == reference[k], "consumer \(k)") }
        }
    }
}
