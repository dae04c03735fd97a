import Foundation
import TesseraKernels

/// A tree ensemble's trees flattened for evaluation: every node in one array, children as
/// array indices, leaves' contributions in side arrays.
///
/// Built once at load from `TreeEnsembleParameters.nodes`, checking that every child exists
/// in its tree, that no walk can loop (each tree is a tree: one root, no node reached
/// twice), that branch features are inside the input, and that leaf values name output
/// dimensions the ensemble has.
struct TreeEnsembleForest: Sendable {
    /// One flattened node. A leaf has `feature == -1`; its contributions are
    /// `leafIndex/leafValue[trueChild..<falseChild]`.
    struct Node: Sendable {
        var threshold: Double
        var feature: Int32
        var trueChild: Int32
        var falseChild: Int32
        /// `TreeNodeBehavior` of a branch (0…5).
        var behavior: UInt8
        var missingTracksTrue: Bool
    }

    let nodes: [Node]
    /// Each tree's root index in ``nodes``.
    let roots: [Int32]
    let leafIndex: [Int32]
    let leafValue: [Double]
    /// The branch behaviour every branch shares, or `nil` when they differ.
    let uniformBehavior: UInt8?
    /// Whether every leaf adds exactly one value to dimension 0.
    let singleValueLeaves: Bool
    /// The largest branch feature index plus one.
    let requiredWidth: Int
    /// Each tree's depth (branches on the longest root-to-leaf path).
    let depths: [Int32]
    /// For ``StepwiseWalk``, when every leaf adds one value and every branch shares one
    /// behaviour: ``nodes`` with each leaf turned into a node that branches to itself (its
    /// value in `threshold`), so every row can take exactly a tree's depth of steps with no
    /// leaf test; and each leaf's output dimension.
    let stepwise: (nodes: [Node], dimensions: [Int32])?
    /// The trees as complete binary trees (``CompleteTrees``), when they are shallow and
    /// every tree's leaves add to one dimension: the fastest walk.
    private(set) var complete: CompleteTrees?

    init(_ spec: CoreMLSpec.TreeEnsemble, dimensions: Int, _ interface: ClassicInterface, file: String) throws {
        var byTree: [UInt64: [UInt64: Int]] = [:]
        var treeOrder: [UInt64] = []
        for (position, node) in spec.nodes.enumerated() {
            if byTree[node.treeId] == nil {
                byTree[node.treeId] = [:]
                treeOrder.append(node.treeId)
            }
            guard byTree[node.treeId]![node.nodeId] == nil else {
                throw interface.invalid("tree \(node.treeId) has two nodes with id \(node.nodeId)", file: file)
            }
            byTree[node.treeId]![node.nodeId] = position
        }
        var nodes: [Node] = []
        nodes.reserveCapacity(spec.nodes.count)
        var roots: [Int32] = []
        var leafIndex: [Int32] = []
        var leafValue: [Double] = []
        var behaviors = Set<UInt8>()
        var singleValueLeaves = true
        var requiredWidth = 0
        var depths: [Int32] = []
        for tree in treeOrder {
            let members = byTree[tree]!
            var children = Set<UInt64>()
            for position in members.values {
                let node = spec.nodes[position]
                guard node.behavior != 6 else { continue }
                guard (0...5).contains(node.behavior) else {
                    throw interface.invalid(
                        "tree \(tree) node \(node.nodeId) has unknown nodeBehavior \(node.behavior)", file: file)
                }
                for child in [node.trueChild, node.falseChild] {
                    guard members[child] != nil else {
                        throw interface.invalid(
                            "tree \(tree) node \(node.nodeId) points at node \(child), which the tree does not have",
                            file: file)
                    }
                    children.insert(child)
                }
            }
            let rootIds = members.keys.filter { !children.contains($0) }
            guard rootIds.count == 1, let rootId = rootIds.first else {
                throw interface.invalid(
                    rootIds.isEmpty
                        ? "tree \(tree) has no root: every node is some node's child (a cycle)"
                        : "tree \(tree) has \(rootIds.count) roots (nodes \(rootIds.sorted().prefix(5).map { "\($0)" }.joined(separator: ", ")))",
                    file: file)
            }
            // Depth-first, parents before children; a node reached twice means a cycle (or
            // a shared child), which a walk could loop on.
            var placed: [UInt64: Int32] = [:]
            var stack: [(id: UInt64, parent: Int, isTrue: Bool, depth: Int32)] = [(rootId, -1, true, 0)]
            var treeDepth: Int32 = 0
            while let (id, parent, isTrue, depth) = stack.popLast() {
                treeDepth = max(treeDepth, depth)
                guard placed[id] == nil else {
                    throw interface.invalid(
                        "tree \(tree) reaches node \(id) twice (a cycle or a shared child)", file: file)
                }
                let spec = spec.nodes[members[id]!]
                let index = Int32(nodes.count)
                placed[id] = index
                if parent >= 0 {
                    if isTrue { nodes[parent].trueChild = index } else { nodes[parent].falseChild = index }
                } else {
                    roots.append(index)
                }
                if spec.behavior == 6 {
                    let start = Int32(leafIndex.count)
                    for (dimension, value) in spec.values {
                        guard dimension < UInt64(dimensions) else {
                            throw interface.invalid(
                                "tree \(tree) leaf \(id) adds to output dimension \(dimension), but the ensemble has "
                                    + "\(dimensions)", file: file)
                        }
                        leafIndex.append(Int32(dimension))
                        leafValue.append(value)
                    }
                    if spec.values.count != 1 || spec.values[0].index != 0 { singleValueLeaves = false }
                    nodes.append(
                        Node(
                            threshold: 0, feature: -1, trueChild: start, falseChild: Int32(leafIndex.count),
                            behavior: 6, missingTracksTrue: false))
                } else {
                    guard spec.featureIndex < UInt64(Int32.max) else {
                        throw interface.invalid(
                            "tree \(tree) node \(id) branches on feature index \(spec.featureIndex)", file: file)
                    }
                    requiredWidth = max(requiredWidth, Int(spec.featureIndex) + 1)
                    behaviors.insert(UInt8(spec.behavior))
                    nodes.append(
                        Node(
                            threshold: spec.threshold, feature: Int32(spec.featureIndex), trueChild: -1,
                            falseChild: -1, behavior: UInt8(spec.behavior), missingTracksTrue: spec.missingTracksTrue))
                    let position = nodes.count - 1
                    stack.append((spec.falseChild, position, false, depth + 1))
                    stack.append((spec.trueChild, position, true, depth + 1))
                }
            }
            if placed.count != members.count {
                let lost = members.keys.filter { placed[$0] == nil }.sorted().prefix(5).map { "\($0)" }
                throw interface.invalid(
                    "tree \(tree): nodes \(lost.joined(separator: ", ")) are not reachable from root \(rootId) "
                        + "(a cycle, or a detached subtree)", file: file)
            }
            depths.append(treeDepth)
        }
        self.nodes = nodes
        self.roots = roots
        self.leafIndex = leafIndex
        self.leafValue = leafValue
        self.uniformBehavior = behaviors.count == 1 ? behaviors.first : (behaviors.isEmpty ? 0 : nil)
        self.singleValueLeaves = singleValueLeaves
        self.requiredWidth = requiredWidth
        self.depths = depths
        let oneValuePerLeaf = nodes.allSatisfy { $0.feature >= 0 || $0.falseChild - $0.trueChild == 1 }
        if oneValuePerLeaf, let behavior = uniformBehavior, behavior <= 3 {
            var stepNodes = nodes
            var stepDimensions = [Int32](repeating: 0, count: nodes.count)
            for index in nodes.indices where nodes[index].feature < 0 {
                let leaf = Int(nodes[index].trueChild)
                stepNodes[index] = Node(
                    threshold: leafValue[leaf], feature: 0, trueChild: Int32(index), falseChild: Int32(index),
                    behavior: behavior, missingTracksTrue: false)
                stepDimensions[index] = leafIndex[leaf]
            }
            stepwise = (stepNodes, stepDimensions)
        } else {
            stepwise = nil
        }
        complete = nil
        complete = requiredWidth < 1 << 30 ? CompleteTrees(self) : nil
    }

    /// Adds every tree's leaf values for each row of `x` (`rows × width`) to `out`
    /// (`rows × dimensions`, holding the base prediction), in parallel over blocks of rows;
    /// each block walks one tree for all its rows before the next tree, so a tree stays in
    /// cache.
    func accumulate(
        _ x: UnsafePointer<Double>, rows: Int, width: Int, dimensions: Int, into out: UnsafeMutablePointer<Double>
    ) {
        let block = 256
        let blocks = (rows + block - 1) / block
        let cost = ParallelCost.perItem(nanoseconds: Double(roots.count) * Double(block) * 8)
        let xAddress = UInt(bitPattern: x)
        let outAddress = UInt(bitPattern: out)
        if let complete {
            let block = CompleteTrees.blockRows
            let blocks = (rows + block - 1) / block
            let cost = ParallelCost.perItem(nanoseconds: Double(roots.count) * Double(block) * 4)
            parallelFor(count: blocks, cost: cost) { range in
                let x = UnsafePointer<Double>(bitPattern: xAddress)!
                let out = UnsafeMutablePointer<Double>(bitPattern: outAddress)!
                for b in range {
                    let first = b * block
                    complete.run(
                        x + first * width, rows: min(block, rows - first), width: width, dimensions: dimensions,
                        out: out + first * dimensions)
                }
            }
            return
        }
        if let stepwise, let behavior = uniformBehavior {
            stepwise.nodes.withUnsafeBufferPointer { nodes in
                stepwise.dimensions.withUnsafeBufferPointer { leafDimensions in
                    roots.withUnsafeBufferPointer { roots in
                        depths.withUnsafeBufferPointer { depths in
                            let walk = StepwiseWalk(
                                nodes: nodes, roots: roots, depths: depths, leafDimensions: leafDimensions)
                            parallelFor(count: blocks, cost: cost) { range in
                                let x = UnsafePointer<Double>(bitPattern: xAddress)!
                                let out = UnsafeMutablePointer<Double>(bitPattern: outAddress)!
                                for b in range {
                                    let first = b * block
                                    walk.run(
                                        x + first * width, rows: min(block, rows - first), width: width,
                                        dimensions: dimensions, out: out + first * dimensions, behavior: behavior)
                                }
                            }
                        }
                    }
                }
            }
            return
        }
        nodes.withUnsafeBufferPointer { nodes in
            leafIndex.withUnsafeBufferPointer { leafIndex in
                leafValue.withUnsafeBufferPointer { leafValue in
                    roots.withUnsafeBufferPointer { roots in
                        let walk = Walk(nodes: nodes, roots: roots, leafIndex: leafIndex, leafValue: leafValue)
                        parallelFor(count: blocks, cost: cost) { range in
                            let x = UnsafePointer<Double>(bitPattern: xAddress)!
                            let out = UnsafeMutablePointer<Double>(bitPattern: outAddress)!
                            for b in range {
                                let first = b * block
                                let count = min(block, rows - first)
                                walk.run(
                                    x + first * width, rows: count, width: width, dimensions: dimensions,
                                    out: out + first * dimensions, behavior: uniformBehavior,
                                    single: singleValueLeaves)
                            }
                        }
                    }
                }
            }
        }
    }
}

/// The inner loops of tree evaluation over raw buffers.
private struct Walk {
    let nodes: UnsafeBufferPointer<TreeEnsembleForest.Node>
    let roots: UnsafeBufferPointer<Int32>
    let leafIndex: UnsafeBufferPointer<Int32>
    let leafValue: UnsafeBufferPointer<Double>

    /// Dispatches once per block on the branch behaviour, so the per-node loop compares
    /// without a switch when every branch shares one (XGBoost's `<`, scikit-learn's `<=`).
    @inline(__always)
    func run(
        _ x: UnsafePointer<Double>, rows: Int, width: Int, dimensions: Int, out: UnsafeMutablePointer<Double>,
        behavior: UInt8?, single: Bool
    ) {
        switch behavior {
        case 0?: loop(x, rows, width, dimensions, out, single) { $0 <= $1 }
        case 1?: loop(x, rows, width, dimensions, out, single) { $0 < $1 }
        case 2?: loop(x, rows, width, dimensions, out, single) { $0 >= $1 }
        case 3?: loop(x, rows, width, dimensions, out, single) { $0 > $1 }
        default: loop(x, rows, width, dimensions, out, single, compare: nil)
        }
    }

    @inline(__always)
    func loop(
        _ x: UnsafePointer<Double>, _ rows: Int, _ width: Int, _ dimensions: Int, _ out: UnsafeMutablePointer<Double>,
        _ single: Bool, compare: ((Double, Double) -> Bool)?
    ) {
        let base = nodes.baseAddress!
        for tree in 0..<roots.count {
            let root = Int(roots[tree])
            for row in 0..<rows {
                let input = x + row * width
                var index = root
                while true {
                    let node = base[index]
                    if node.feature < 0 {
                        if single {
                            out[row * dimensions] += leafValue[Int(node.trueChild)]
                        } else {
                            for leaf in Int(node.trueChild)..<Int(node.falseChild) {
                                out[row * dimensions + Int(leafIndex[leaf])] += leafValue[leaf]
                            }
                        }
                        break
                    }
                    let value = input[Int(node.feature)]
                    let goesTrue: Bool
                    if value.isNaN {
                        goesTrue = node.missingTracksTrue
                    } else if let compare {
                        goesTrue = compare(value, node.threshold)
                    } else {
                        goesTrue = Self.branch(node.behavior, value, node.threshold)
                    }
                    index = Int(goesTrue ? node.trueChild : node.falseChild)
                }
            }
        }
    }

    /// `TreeNodeBehavior` 0…5: `<=`, `<`, `>=`, `>`, `==`, `!=`.
    @inline(__always)
    static func branch(_ behavior: UInt8, _ value: Double, _ threshold: Double) -> Bool {
        switch behavior {
        case 0: value <= threshold
        case 1: value < threshold
        case 2: value >= threshold
        case 3: value > threshold
        case 4: value == threshold
        default: value != threshold
        }
    }
}
