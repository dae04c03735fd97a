import Foundation
import Synchronization
import TesseraGraph
import TesseraKernels
import Testing

/// A constant node holding `scalars` in `shape`.
func constant(_ scalars: [Float], _ shape: [Int]) -> Node {
    let storage = TensorStorage.allocate(count: scalars.count, type: .float32)
    scalars.withUnsafeBytes { storage.pointer.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
    return Node(value: TensorValue(storage: storage, layout: StridedLayout(contiguous: shape), type: .float32))
}

/// The node's elements in row-major order.
func floats(_ node: Node) -> [Float] {
    let value = node.value!.compacted()
    return Array(UnsafeBufferPointer(start: value.pointer.assumingMemoryBound(to: Float.self), count: node.count))
}

@Suite("Graph execution")
struct GraphSmokeTests {
    @Test("a broadcast normalize chain runs as one fused program")
    func normalizeFuses() {
        let x = constant((0..<24).map(Float.init), [2, 3, 2, 2])
        let mean = constant([1, 2, 3], [1, 3, 1, 1])
        let std = constant([2, 4, 8], [1, 3, 1, 1])
        let y = Node(.binary(.div), inputs: [Node(.binary(.sub), inputs: [x, mean]), std])
        let stats = GraphExecutor.materialize([y])
        #expect(stats.kernels == 1 && stats.fusedGroups == 1 && stats.fusedNodes == 2)
        let expected: [Float] = (0..<24).map { i in
            let c = (i / 4) % 3
            return (Float(i) - [1, 2, 3][c]) / [2, 4, 8][c]
        }
        #expect(floats(y) == expected)
        #expect(y.inputs.isEmpty)
    }

    @Test("layernorm: reductions split the chain; the plan is cached by structure")
    func layerNorm() {
        func build(_ x: Node) -> Node {
            let mean = Node(.reduce(.mean, axes: [1]), inputs: [x])
            let c = Node(.binary(.sub), inputs: [x, mean])
            let variance = Node(.reduce(.mean, axes: [1]), inputs: [Node(.binary(.mul), inputs: [c, c])])
            let eps = constant([1e-5], [])
            let denominator = Node(.unary(.sqrt), inputs: [Node(.binary(.add), inputs: [variance, eps])])
            return Node(.binary(.div), inputs: [c, denominator])
        }
        let data: [Float] = [1, 2, 3, 4, 10, 20, 30, 40]
        let y = build(constant(data, [2, 4]))
        let first = GraphExecutor.materialize([y])
        #expect(!first.planCacheHit)
        // Tests run in parallel and may fill the cache, which then starts over between the two
        // calls: a miss is retried; a cache that never reuses a plan fails every time.
        var second = GraphExecutor.materialize([build(constant(data.map { $0 * 2 }, [2, 4]))])
        for _ in 0..<4 where !second.planCacheHit {
            second = GraphExecutor.materialize([build(constant(data.map { $0 * 2 }, [2, 4]))])
        }
        #expect(second.planCacheHit)
        #expect(first.kernels <= 3, "\(first)")
        let out = floats(y)
        let row: [Float] = [-1.3416, -0.4472, 0.4472, 1.3416]
        for (a, b) in zip(out, row + row) { #expect(abs(a - b) < 1e-3) }
    }

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

@Suite("Fused reductions")
struct FusedReductionTests {
    @Test(
        "an element-wise producer streams into its trailing-axes reduction, chunk by chunk",
        arguments: [[50, 1000], [3, 4, 5], [1, 7], [40_000, 1]])
    func producerIntoReduction(shape: [Int]) {
        let count = shape.reduce(1, *)
        let data = (0..<count).map { Float($0 % 17) - 8 }
        let x = constant(data, shape)
        let two = constant([2], [])
        let axes = Array(1..<shape.count)
        let sum = Node(.reduce(.sum, axes: axes), inputs: [Node(.binary(.mul), inputs: [x, two])])
        let maxNode = Node(.reduce(.max, axes: axes), inputs: [Node(.unary(.abs), inputs: [x])])
        let stats = GraphExecutor.materialize([sum, maxNode])
        #expect(stats.kernels == 2 && stats.fusedGroups == 2, "\(stats)")
        let rowLength = count / shape[0]
        let rows = (0..<shape[0]).map { Array(data[($0 * rowLength)..<(($0 + 1) * rowLength)]) }
        #expect(floats(sum) == rows.map { $0.reduce(0) { $0 + $1 * 2 } })
        #expect(floats(maxNode) == rows.map { $0.map(abs).max()! })
    }

    @Test("a producer that is also requested is computed once, not absorbed")
    func requestedProducer() {
        let x = constant([1, 2, 3, 4, 5, 6], [2, 3])
        let y = Node(.unary(.square), inputs: [x])
        let total = Node(.reduce(.sum, axes: [1]), inputs: [y])
        GraphExecutor.materialize([y, total])
        #expect(floats(y) == [1, 4, 9, 16, 25, 36])
        #expect(floats(total) == [14, 77])
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

@Suite("Memory planning")
struct MemoryPlanningTests {
    @Test("a fused step writes over a dying intermediate; peak memory stays at two buffers")
    func inPlace() {
        // y = exp(matmul(a, b)) + 1: the matmul result dies at the fused step and takes its result.
        let a = constant([Float](repeating: 0.5, count: 64 * 64), [64, 64])
        let b = constant([Float](repeating: 0.01, count: 64 * 64), [64, 64])
        let product = Node(.matmul, inputs: [a, b])
        let y = Node(.binary(.add), inputs: [Node(.unary(.exp), inputs: [product]), constant([1], [])])
        let stats = GraphExecutor.materialize([y])
        #expect(stats.inPlaceSteps == 1, "\(stats)")
        #expect(stats.peakBytes <= 64 * 64 * 4, "\(stats)")
        let expected = Float(Foundation.exp(Double(0.5 * 0.01 * 64))) + 1
        #expect(floats(y).allSatisfy { abs($0 - expected) < 1e-5 })
    }
}

@Suite("Fused reductions over empty axes")
struct FusedEmptyReductionTests {
    @Test("a streamed sum over an empty trailing axis gives zeros")
    func emptyTrailingAxis() {
        let x = constant([], [3, 0])
        let sum = Node(.reduce(.sum, axes: [1]), inputs: [Node(.unary(.square), inputs: [x])])
        GraphExecutor.materialize([sum])
        #expect(floats(sum) == [0, 0, 0])
    }
}
