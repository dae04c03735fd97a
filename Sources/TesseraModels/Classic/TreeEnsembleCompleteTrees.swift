import CTesseraTrees

/// A tree ensemble's shallow trees laid out as complete binary trees, for evaluation without
/// child indices: in a tree of depth `d`, node `n`'s children are `2n + 1` (true) and
/// `2n + 2` (false), and after exactly `d` steps a row stands on one of the `2^d` leaves.
///
/// A leaf above the bottom level is padded: the branches below it all lead to copies of its
/// value, so whichever way they go (they compare feature 0 with 0) the row ends on it. Each
/// tree keeps its own depth, and its nodes in three struct-of-arrays columns: the feature
/// index and missing-value direction packed in one `Int32` (`feature << 1 | missingTracksTrue`),
/// the threshold, and the leaf values.
///
/// Built when every branch shares one `<`, `<=`, `>` or `>=` behaviour (XGBoost's `<`,
/// scikit-learn's `<=`), every leaf adds one value and all of a tree's leaves add to the same
/// output dimension (gradient boosting: one tree per class), and the padding stays small
/// (depth ≤ 10, at most 8 × the file's nodes). A random forest's deep trees take
/// ``StepwiseWalk`` instead.
struct CompleteTrees: Sendable {
    /// Per node, `feature << 1 | (missingTracksTrue ? 1 : 0)`; tree `t`'s nodes start at
    /// `nodeStart[t]`.
    let featureAndMissing: [Int32]
    let thresholds: [Double]
    /// Per tree, its `2^depth` leaf values from `leafStart[t]`.
    let leaves: [Double]
    let nodeStart: [Int32]
    let leafStart: [Int32]
    let depths: [Int32]
    /// The output dimension each tree adds to.
    let treeDimensions: [Int32]
    let behavior: UInt8

    /// The largest depth a tree may have here, and the padding allowed over the file's nodes.
    static let maximumDepth: Int32 = 10
    static let maximumGrowth = 8

    /// Lays out `forest`'s trees, or returns `nil` when they do not fit (see the type).
    init?(_ forest: TreeEnsembleForest) {
        guard let behavior = forest.uniformBehavior, behavior <= 3,
            forest.depths.allSatisfy({ $0 <= Self.maximumDepth })
        else { return nil }
        let padded = forest.depths.reduce(0) { $0 + (2 << Int($1)) }
        guard padded <= Self.maximumGrowth * max(forest.nodes.count, 64) else { return nil }
        var featureAndMissing: [Int32] = []
        var thresholds: [Double] = []
        var leaves: [Double] = []
        var nodeStart: [Int32] = []
        var leafStart: [Int32] = []
        var treeDimensions: [Int32] = []
        featureAndMissing.reserveCapacity(padded / 2)
        thresholds.reserveCapacity(padded / 2)
        leaves.reserveCapacity(padded / 2)
        for (tree, root) in forest.roots.enumerated() {
            let depth = Int(forest.depths[tree])
            let firstNode = featureAndMissing.count
            let firstLeaf = leaves.count
            nodeStart.append(Int32(firstNode))
            leafStart.append(Int32(firstLeaf))
            featureAndMissing.append(contentsOf: repeatElement(0, count: (1 << depth) - 1))
            thresholds.append(contentsOf: repeatElement(0, count: (1 << depth) - 1))
            leaves.append(contentsOf: repeatElement(0, count: 1 << depth))
            var dimension: Int32 = -1
            // (file node, complete-tree position, level)
            var stack: [(node: Int, position: Int, level: Int)] = [(Int(root), 0, 0)]
            while let (index, position, level) = stack.popLast() {
                let node = forest.nodes[index]
                if node.feature >= 0 {
                    featureAndMissing[firstNode + position] = node.feature << 1 | (node.missingTracksTrue ? 1 : 0)
                    thresholds[firstNode + position] = node.threshold
                    stack.append((Int(node.trueChild), 2 * position + 1, level + 1))
                    stack.append((Int(node.falseChild), 2 * position + 2, level + 1))
                    continue
                }
                let leaf = Int(node.trueChild)
                guard node.falseChild - node.trueChild == 1 else { return nil }
                let leafDimension = forest.leafIndex[leaf]
                guard dimension < 0 || dimension == leafDimension else { return nil }
                dimension = leafDimension
                // The leaf's level-`depth` descendants: positions `(p + 1) · 2^(depth − level) − 1`
                // onwards, `2^(depth − level)` of them; padded branches above them stay 0 / 0.
                let span = 1 << (depth - level)
                let first = (position + 1) * span - 1 - ((1 << depth) - 1)
                for offset in 0..<span { leaves[firstLeaf + first + offset] = forest.leafValue[leaf] }
            }
            treeDimensions.append(max(dimension, 0))
        }
        // The vector walk reads a tree's first 16 nodes and leaves at once: room past the last.
        featureAndMissing.append(contentsOf: repeatElement(0, count: 16))
        thresholds.append(contentsOf: repeatElement(0, count: 16))
        leaves.append(contentsOf: repeatElement(0, count: 16))
        self.featureAndMissing = featureAndMissing
        self.thresholds = thresholds
        self.leaves = leaves
        self.nodeStart = nodeStart
        self.leafStart = leafStart
        self.depths = forest.depths
        self.treeDimensions = treeDimensions
        self.behavior = behavior
    }

    /// Adds every tree's leaf value for `rows` rows of `x` (`rows × width`, row-major) to
    /// `out` (`rows × dimensions`). `rows` is at most ``blockRows``.
    ///
    /// With one dimension on a CPU with AVX-512, whole groups of eight rows take the vector
    /// walk (`tessera_complete_trees_f64_avx512`, the same comparisons and additions in the
    /// same order, so the same bits) and the rest the scalar one.
    func run(_ x: UnsafePointer<Double>, rows: Int, width: Int, dimensions: Int, out: UnsafeMutablePointer<Double>) {
        if dimensions == 1, rows >= 8, Self.vectorWalk, width <= Int(Int32.max) / Self.blockRows {
            let vectorRows = rows & ~7
            featureAndMissing.withUnsafeBufferPointer { nodes in
                thresholds.withUnsafeBufferPointer { thresholds in
                    leaves.withUnsafeBufferPointer { leaves in
                        nodeStart.withUnsafeBufferPointer { nodeStart in
                            leafStart.withUnsafeBufferPointer { leafStart in
                                depths.withUnsafeBufferPointer { depths in
                                    tessera_complete_trees_f64_avx512(
                                        x, vectorRows, width, nodes.baseAddress!, thresholds.baseAddress!,
                                        leaves.baseAddress!, nodeStart.baseAddress!, leafStart.baseAddress!,
                                        depths.baseAddress!, depths.count, Int32(behavior), out)
                                }
                            }
                        }
                    }
                }
            }
            if vectorRows < rows {
                scalar(
                    x + vectorRows * width, rows: rows - vectorRows, width: width, dimensions: 1, out: out + vectorRows)
            }
            return
        }
        scalar(x, rows: rows, width: width, dimensions: dimensions, out: out)
    }

    /// Whether the CPU runs the AVX-512 walk (checked once).
    static let vectorWalk = tessera_cpu_has_avx512_trees() != 0

    /// The scalar walk of ``run(_:rows:width:dimensions:out:)``.
    func scalar(_ x: UnsafePointer<Double>, rows: Int, width: Int, dimensions: Int, out: UnsafeMutablePointer<Double>) {
        switch behavior {
        case 0: walk(x, rows, width, dimensions, out, LessOrEqual.self)
        case 1: walk(x, rows, width, dimensions, out, Less.self)
        case 2: walk(x, rows, width, dimensions, out, GreaterOrEqual.self)
        default: walk(x, rows, width, dimensions, out, Greater.self)
        }
    }

    /// The rows one block walks through a tree before the next tree.
    static let blockRows = 128

    @inline(__always)
    private func walk<Rule: BranchRule>(
        _ x: UnsafePointer<Double>, _ rows: Int, _ width: Int, _ dimensions: Int,
        _ out: UnsafeMutablePointer<Double>, _ rule: Rule.Type
    ) {
        featureAndMissing.withUnsafeBufferPointer { featureAndMissing in
            thresholds.withUnsafeBufferPointer { thresholds in
                leaves.withUnsafeBufferPointer { leaves in
                    withUnsafeTemporaryAllocation(of: Int.self, capacity: Self.blockRows) { positions in
                        let position = positions.baseAddress!
                        for tree in 0..<depths.count {
                            let depth = Int(depths[tree])
                            let nodes = featureAndMissing.baseAddress! + Int(nodeStart[tree])
                            let limits = thresholds.baseAddress! + Int(nodeStart[tree])
                            // The bottom level starts at 2^depth − 1; the leaves array at 0.
                            let values = leaves.baseAddress! + Int(leafStart[tree]) - ((1 << depth) - 1)
                            if depth == 0 {
                                for row in 0..<rows { position[row] = 0 }
                            } else {
                                // Level 0: every row at the root.
                                let root = Int(nodes[0])
                                let feature = root >> 1
                                let missing = root & 1
                                let limit = limits[0]
                                var input = x + feature
                                for row in 0..<rows {
                                    let value = input.pointee
                                    input += width
                                    position[row] = 2 &- Self.goesTrue(value, limit, missing, rule)
                                }
                                for _ in 1..<depth {
                                    var input = x
                                    for row in 0..<rows {
                                        let node = position[row]
                                        let packed = Int(nodes[node])
                                        let value = input[packed >> 1]
                                        input += width
                                        position[row] =
                                            2 &* node &+ 2 &- Self.goesTrue(value, limits[node], packed & 1, rule)
                                    }
                                }
                            }
                            if dimensions == 1 {
                                for row in 0..<rows { out[row] += values[position[row]] }
                            } else {
                                let dimension = Int(treeDimensions[tree])
                                for row in 0..<rows { out[row * dimensions + dimension] += values[position[row]] }
                            }
                        }
                    }
                }
            }
        }
    }

    /// `1` when the row goes to the true child: the comparison holds, or the value is
    /// missing (NaN) and `missing` (`0` or `1`) says missing values go true. Branch-free.
    @inline(__always)
    static func goesTrue<Rule: BranchRule>(_ value: Double, _ threshold: Double, _ missing: Int, _ rule: Rule.Type)
        -> Int
    {
        let compared = Int(unsafeBitCast(Rule.branch(value, threshold), to: UInt8.self))
        let isNaN = Int(unsafeBitCast(value != value, to: UInt8.self))
        return compared | (isNaN & missing)
    }
}
