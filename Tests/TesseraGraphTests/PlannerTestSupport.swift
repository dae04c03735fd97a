import Foundation
import TesseraGraph
import TesseraKernels
import Testing
import _TesseraTestSupport

/// A constant node holding `scalars` in `shape`.
func constant(_ scalars: [Float], _ shape: [Int]) -> Node {
    let storage = TensorStorage.allocate(count: scalars.count, type: .float32)
    scalars.withUnsafeBytes { storage.pointer.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
    return Node(value: TensorValue(storage: storage, layout: StridedLayout(contiguous: shape), type: .float32))
}

/// An int32 constant node holding `scalars` in `shape`.
func intConstant(_ scalars: [Int32], _ shape: [Int]) -> Node {
    let storage = TensorStorage.allocate(count: scalars.count, type: .int32)
    scalars.withUnsafeBytes { storage.pointer.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
    return Node(value: TensorValue(storage: storage, layout: StridedLayout(contiguous: shape), type: .int32))
}

/// The float32 node's elements in row-major order.
func floats(_ node: Node) -> [Float] {
    let value = node.value!.compacted()
    return Array(UnsafeBufferPointer(start: value.pointer.assumingMemoryBound(to: Float.self), count: node.count))
}

/// A materialized node's elements in row-major order, as `Double` (float32, int32 and bool).
func elements(_ node: Node) -> [Double] {
    let value = node.value!.compacted()
    switch node.type {
    case .float32:
        return UnsafeBufferPointer(start: value.pointer.assumingMemoryBound(to: Float.self), count: node.count).map(
            Double.init)
    case .int32:
        return UnsafeBufferPointer(start: value.pointer.assumingMemoryBound(to: Int32.self), count: node.count).map(
            Double.init)
    case .bool:
        return UnsafeBufferPointer(start: value.pointer.assumingMemoryBound(to: UInt8.self), count: node.count).map {
            $0 == 0 ? 0 : 1
        }
    default:
        Issue.record("no reader for \(node.type) in the planner tests")
        return []
    }
}

/// `count` seeded values in `[-2, 2)`, multiples of 1/8 (exact in float32).
func seededValues(_ count: Int, seed: UInt64) -> [Float] {
    var random = SeededRandom(seed: seed)
    return (0..<count).map { _ in Float(Int.random(in: -16..<16, using: &random)) / 8 }
}

/// Deliberately naive evaluation of an un-materialized graph, node by node in `Double`, from
/// the `_TesseraTestSupport` references: what every planner pass must leave unchanged. Call it
/// before materializing (materializing drops the inputs).
enum NaiveGraph {
    static func evaluate(_ node: Node) -> [Double] {
        var memo: [ObjectIdentifier: [Double]] = [:]
        return evaluate(node, &memo)
    }

    private static func evaluate(_ node: Node, _ memo: inout [ObjectIdentifier: [Double]]) -> [Double] {
        if let known = memo[ObjectIdentifier(node)] { return known }
        let result: [Double]
        if node.value != nil {
            result = elements(node)
        } else {
            let inputs = node.inputs
            let values = inputs.map { evaluate($0, &memo) }
            func broadcast(_ k: Int) -> [Double] {
                NaiveLayout.gather(values[k], StridedLayout(contiguous: inputs[k].shape).broadcast(to: node.shape))
            }
            switch node.op {
            case .unary(let op): result = values[0].map { NaiveElementwise.unary(op, $0) }
            case .binary(let op):
                result = zip(broadcast(0), broadcast(1)).map { a, b in
                    if node.type == .bool { return NaiveElementwise.binary(op, a, b) }
                    if inputs[0].type == .int32 {
                        return Double(Int32(truncatingIfNeeded: NaiveElementwise.binary(op, Int64(a), Int64(b))))
                    }
                    return NaiveElementwise.binary(op, a, b)
                }
            case .cast(let type):
                result = values[0].map { type == .float32 ? Double(Float($0)) : $0.rounded(.towardZero) }
            case .broadcast: result = broadcast(0)
            case .reshape: result = values[0]
            case .permute(let p):
                result = NaiveLayout.gather(values[0], StridedLayout(contiguous: inputs[0].shape).permuted(p))
            case .slice(let starts, let steps, let counts):
                result = NaiveLayout.indices(of: counts).map { index in
                    let source = zip(index, zip(starts, steps)).map { i, startStep in startStep.0 + i * startStep.1 }
                    return values[0][NaiveLayout.linear(source, in: inputs[0].shape)]
                }
            case .reduce(let op, let axes):
                result = NaiveReduction.reduce(op, values[0], StridedLayout(contiguous: inputs[0].shape), axes: axes)
            case .softmax(let axis), .logSoftmax(let axis):
                var isLog = false
                if case .logSoftmax = node.op { isLog = true }
                result = NaiveReduction.softmax(
                    values[0], StridedLayout(contiguous: inputs[0].shape), axis: axis, log: isLog)
            case .concat(let axis):
                result = NaiveCopy.concatenate(zip(values, inputs).map { ($0, $1.shape) }, axis: axis).elements
            case .matmul:
                result = NaiveLinearAlgebra.matmul(values[0], inputs[0].shape, values[1], inputs[1].shape).1
            case .conv2d(let parameters):
                result =
                    NaiveLinearAlgebra.conv2d(
                        values[0], inputs[0].shape, values[1], inputs[1].shape,
                        bias: values.count > 2 ? values[2] : nil,
                        parameters
                    ).1
            default:
                Issue.record("NaiveGraph has no reference for \(node.op)")
                result = [Double](repeating: .nan, count: node.count)
            }
        }
        memo[ObjectIdentifier(node)] = result
        return result
    }
}

/// Checks that `got` matches the naive reference within float32 rounding of a short chain.
func expectClose(
    _ got: [Double], _ expected: [Double], tolerance: Double = 1e-5, _ comment: Comment? = nil,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    #expect(got.count == expected.count, comment, sourceLocation: sourceLocation)
    for (k, (a, b)) in zip(got, expected).enumerated() {
        let close = a == b || (a.isNaN && b.isNaN) || abs(a - b) <= tolerance * Swift.max(1, abs(b))
        if !close {
            Issue.record(
                "element \(k): \(a) vs \(b) \(comment.map { "— \($0)" } ?? "")", sourceLocation: sourceLocation)
            return
        }
    }
}

/// The plan's step kinds for `nodes`, then materializes them and checks every node against the
/// naive reference. Returns the description and the run's statistics.
@discardableResult
func planAndCheck(
    _ nodes: [Node], tolerance: Double = 1e-5, sourceLocation: SourceLocation = #_sourceLocation
) -> (plan: PlanDescription, stats: PlanStatistics) {
    let expected = nodes.map(NaiveGraph.evaluate)
    let plan = GraphExecutor.describePlan(nodes)
    let stats = GraphExecutor.materialize(nodes)
    for (node, reference) in zip(nodes, expected) {
        expectClose(elements(node), reference, tolerance: tolerance, "\(plan)", sourceLocation: sourceLocation)
    }
    return (plan, stats)
}
