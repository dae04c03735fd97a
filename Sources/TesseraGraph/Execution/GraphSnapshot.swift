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

    var nodes: [Node] = []
    var key: Key
    /// For each entry that already has its elements, the value (bound as a plan input).
    var leafValues: [Int: TensorValue] = [:]

    init(requested: [Node]) {
        var entries: [Entry] = []
        var index: [ObjectIdentifier: Int] = [:]
        var outputs: [Int] = []
        // Post-order walk: a frame is a node and the inputs still to visit.
        var stack: [(node: Node, inputs: [Node], next: Int)] = []
        for root in requested {
            if let known = index[ObjectIdentifier(root)] {
                outputs.append(known)
                continue
            }
            stack.append((root, root.inputs, 0))
            while !stack.isEmpty {
                let top = stack.count - 1
                if let value = stack[top].node.value {
                    let node = stack[top].node
                    stack.removeLast()
                    if index[ObjectIdentifier(node)] != nil { continue }
                    index[ObjectIdentifier(node)] = entries.count
                    leafValues[entries.count] = value
                    entries.append(Entry(op: .constant, shape: node.shape, type: node.type, inputs: []))
                    nodes.append(node)
                    continue
                }
                if stack[top].next < stack[top].inputs.count {
                    let input = stack[top].inputs[stack[top].next]
                    stack[top].next += 1
                    if index[ObjectIdentifier(input)] == nil {
                        stack.append((input, input.inputs, 0))
                    }
                    continue
                }
                let frame = stack.removeLast()
                if index[ObjectIdentifier(frame.node)] != nil { continue }
                index[ObjectIdentifier(frame.node)] = entries.count
                entries.append(
                    Entry(
                        op: frame.node.op, shape: frame.node.shape, type: frame.node.type,
                        inputs: frame.inputs.map { index[ObjectIdentifier($0)]! }))
                nodes.append(frame.node)
            }
            outputs.append(index[ObjectIdentifier(root)]!)
        }
        key = Key(entries: entries, outputs: outputs)
    }
}
