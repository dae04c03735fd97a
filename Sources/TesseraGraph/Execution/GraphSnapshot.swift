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

    init(requested: [Node]) {
        var entries: [Entry] = []
        var index: [ObjectIdentifier: Int] = [:]
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
                index[ObjectIdentifier(node)] = entries.count
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
            if index[ObjectIdentifier(root)] == nil { visit(root) }
            while let top = stackNodes.indices.last {
                let next = stackNext[top]
                if next < stackInputs[top].count {
                    stackNext[top] = next + 1
                    let input = stackInputs[top][next]
                    if index[ObjectIdentifier(input)] == nil { visit(input) }
                    continue
                }
                let node = stackNodes.removeLast()
                let inputs = stackInputs.removeLast()
                stackNext.removeLast()
                if index[ObjectIdentifier(node)] != nil { continue }
                index[ObjectIdentifier(node)] = entries.count
                var inputIndices: [Int] = []
                inputIndices.reserveCapacity(inputs.count)
                for input in inputs { inputIndices.append(index[ObjectIdentifier(input)]!) }
                entries.append(Entry(op: node.op, shape: node.shape, type: node.type, inputs: inputIndices))
                nodes.append(node)
            }
            outputs.append(index[ObjectIdentifier(root)]!)
        }
        self.nodes = nodes
        self.leafValues = leafValues
        key = Key(entries: entries, outputs: outputs)
    }
}
