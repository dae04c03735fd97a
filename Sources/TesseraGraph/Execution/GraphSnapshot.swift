import Synchronization
import TesseraKernels

/// The un-materialized part of a graph below some requested nodes, flattened in topological
/// order, plus the structural key the plan cache looks plans up by.
///
/// Collection is iterative (an explicit stack), so a 100,000-node chain does not recurse. The
/// key is one flat array of words (each entry's op, type, shape and input positions, then the
/// outputs) with a hash computed while it is written: looking a plan up costs one pass of
/// multiplies and one comparison of two arrays, with no per-entry allocation.
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
        var words: [Int]
        var digest: UInt64

        static func == (a: Key, b: Key) -> Bool { a.digest == b.digest && a.words == b.words }
        func hash(into hasher: inout Hasher) { hasher.combine(digest) }
    }

    /// The collected nodes, in topological order (entry `i` is `nodes[i]`).
    var nodes: [Node]
    /// The entries of the requested nodes.
    var outputs: [Int]
    var key: Key
    /// The entries that already have their elements, with their values (bound as plan inputs).
    var leafValues: [(entry: Int, value: TensorValue)]
    /// For each entry, where its input count sits in `key.words` (its input entries follow),
    /// or -1 for a leaf: the inputs as collected, which another thread's materialization may
    /// since have dropped from the node.
    var inputPositions: [Int]

    /// Collects the graph below `requested`; `epoch` must differ from every earlier
    /// collection's (the executor counts them under its lock).
    /// `codes` numbers the ops that keys do not write inline (see `GraphOp.encode`);
    /// `sizeHint` (the previous snapshot's node and word counts) sizes the arrays up front.
    init(requested: [Node], epoch: UInt64, codes: inout [GraphOp: Int], sizeHint: (nodes: Int, words: Int)) {
        var nodes: [Node] = []
        nodes.reserveCapacity(sizeHint.nodes)
        var outputs: [Int] = []
        var leafValues: [(entry: Int, value: TensorValue)] = []
        var words: [Int] = []
        words.reserveCapacity(sizeHint.words)
        var inputPositions: [Int] = []
        inputPositions.reserveCapacity(sizeHint.nodes)
        var digest = KeyDigest()
        func index(of node: Node) -> Int? {
            node.visitEpoch.load(ordering: .relaxed) == epoch ? node.visitIndex.load(ordering: .relaxed) : nil
        }
        func append(_ node: Node, inputs: [Node]?) {
            node.visitIndex.store(nodes.count, ordering: .relaxed)
            node.visitEpoch.store(epoch, ordering: .relaxed)
            nodes.append(node)
            let start = words.count
            if let inputs {
                node.op.encode(into: &words, codes: &codes)
                inputPositions.append(words.count)
                words.append(inputs.count)
                for input in inputs { words.append(index(of: input)!) }
            } else {
                inputPositions.append(-1)
                words.append(GraphOp.constantCode)
            }
            words.append(Int(node.type.rawValue))
            words.append(node.shape.count)
            for dimension in node.shape { words.append(dimension) }
            for k in start..<words.count { digest.mix(words[k]) }
        }
        // Post-order walk over parallel stacks (node, its pending inputs, the next input to
        // visit), so frames are not copied as they are read.
        var stackNodes: [Node] = []
        var stackInputs: [[Node]] = []
        var stackNext: [Int] = []
        func visit(_ node: Node) {
            let (value, inputs) = node.contents
            if let value {
                leafValues.append((nodes.count, value))
                append(node, inputs: nil)
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
                if index(of: node) == nil { append(node, inputs: inputs) }
            }
            outputs.append(index(of: root)!)
        }
        words.append(-1)
        for output in outputs { words.append(output) }
        for output in outputs { digest.mix(output) }
        self.nodes = nodes
        self.outputs = outputs
        self.leafValues = leafValues
        self.inputPositions = inputPositions
        key = Key(words: words, digest: digest.value)
    }

    /// The entries, for compiling a plan (only on a cache miss), from the inputs recorded
    /// while collecting.
    func entries() -> [Entry] {
        nodes.indices.map { i in
            let node = nodes[i]
            let position = inputPositions[i]
            if position < 0 { return Entry(op: .constant, shape: node.shape, type: node.type, inputs: []) }
            let count = key.words[position]
            return Entry(
                op: node.op, shape: node.shape, type: node.type,
                inputs: Array(key.words[(position + 1)..<(position + 1 + count)]))
        }
    }
}

/// A fast 64-bit mix of the key's words (not cryptographic; equal digests are confirmed by
/// comparing the words).
struct KeyDigest {
    private(set) var value: UInt64 = 0x9E37_79B9_7F4A_7C15

    @inline(__always)
    mutating func mix(_ word: Int) {
        value = (value ^ UInt64(bitPattern: Int64(word))) &* 0xFF51_AFD7_ED55_8CCD
        value ^= value >> 29
    }
}
