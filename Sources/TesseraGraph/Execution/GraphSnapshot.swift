import Synchronization
import TesseraKernels

/// The un-materialized part of a graph below some requested nodes, flattened in topological
/// order, plus the structural key the plan cache looks plans up by.
///
/// Collection is iterative (an explicit stack), so a 100,000-node chain does not recurse.
struct GraphSnapshot {
    /// One collected node: its op (`constant` for values that exist), shape, type and inputs
    /// as indices of earlier entries.
    struct Entry: Hashable {
        var op: GraphOp
        var shape: [Int]
        var type: KernelScalarType
        var inputs: [Int]
    }

    /// The structure alone: equal keys get the same plan.
    struct Key: Hashable {
        var entries: [Entry]
        var outputs: [Int]
    }

    var nodes: [Node]
    var key: Key
    /// For each entry that already has its elements, the value (bound as a plan input).
    var leafValues: [Int: TensorValue]

    /// Collects the graph below `requested`; `epoch` must differ from every earlier
    /// collection's (the executor counts them under its lock).
    init(requested: [Node], epoch: UInt64) {
        var entries: [Entry] = []
        func index(of node: Node) -> Int? {
            node.visitEpoch.load(ordering: .relaxed) == epoch ? node.visitIndex.load(ordering: .relaxed) : nil
        }
        func mark(_ node: Node, _ i: Int) {
            node.visitIndex.store(i, ordering: .relaxed)
            node.visitEpoch.store(epoch, ordering: .relaxed)
        }
        var outputs: [Int] = []
        var nodes: [Node] = []
        var leafValues: [Int: TensorValue] = [:]
        // Post-order walk over parallel stacks (node, its pending inputs, the next input to
        // visit), so frames are not copied as they are read.
        var stackNodes: [Node] = []
        var stackInputs: [[Node]] = []
        var stackNext: [Int] = []
        func visit(_ node: Node) {
            let (value, inputs) = node.contents
            if let value {
                mark(node, entries.count)
                leafValues[entries.count] = value
                entries.append(Entry(op: .constant, shape: node.shape, type: node.type, inputs: []))
                nodes.append(node)
            } else {
                stackNodes.append(node)
                stackInputs.append(inputs)
                stackNext.append(0)
            }
        }
        for root in requested {
            if index(of: root) == nil { visit(root) }
            while let top = stackNodes.indices.last {
                let next = stackNext[top]
                if next < stackInputs[top].count {
                    stackNext[top] = next + 1
                    let input = stackInputs[top][next]
                    if index(of: input) == nil { visit(input) }
                    continue
                }
                let node = stackNodes.removeLast()
                let inputs = stackInputs.removeLast()
                stackNext.removeLast()
                if index(of: node) != nil { continue }
                mark(node, entries.count)
                var inputIndices: [Int] = []
                inputIndices.reserveCapacity(inputs.count)
                for input in inputs { inputIndices.append(index(of: input)!) }
                entries.append(Entry(op: node.op, shape: node.shape, type: node.type, inputs: inputIndices))
                nodes.append(node)
            }
            outputs.append(index(of: root)!)
        }
        self.nodes = nodes
        self.leafValues = leafValues
        key = Key(entries: entries, outputs: outputs)
    }
}
