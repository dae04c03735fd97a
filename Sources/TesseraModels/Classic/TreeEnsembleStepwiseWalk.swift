/// Tree evaluation without a leaf test: every leaf branches to itself, so a block of rows
/// takes exactly the tree's depth of steps, each step advancing every row one level with a
/// compare and a select. The rows' walks are independent, so the processor overlaps their
/// loads instead of waiting on one row's chain of node → feature → node.
struct StepwiseWalk {
    let nodes: UnsafeBufferPointer<TreeEnsembleForest.Node>
    let roots: UnsafeBufferPointer<Int32>
    let depths: UnsafeBufferPointer<Int32>
    let leafDimensions: UnsafeBufferPointer<Int32>

    /// Adds every tree's leaf value for `rows` (≤ 256) rows of `x` to `out`.
    @inline(__always)
    func run(
        _ x: UnsafePointer<Double>, rows: Int, width: Int, dimensions: Int, out: UnsafeMutablePointer<Double>,
        behavior: UInt8
    ) {
        switch behavior {
        case 0: steps(x, rows, width, dimensions, out, LessOrEqual.self)
        case 1: steps(x, rows, width, dimensions, out, Less.self)
        case 2: steps(x, rows, width, dimensions, out, GreaterOrEqual.self)
        default: steps(x, rows, width, dimensions, out, Greater.self)
        }
    }

    @inline(__always)
    private func steps<Rule: BranchRule>(
        _ x: UnsafePointer<Double>, _ rows: Int, _ width: Int, _ dimensions: Int,
        _ out: UnsafeMutablePointer<Double>, _ rule: Rule.Type
    ) {
        let base = nodes.baseAddress!
        withUnsafeTemporaryAllocation(of: Int32.self, capacity: 256) { positions in
            let index = positions.baseAddress!
            for tree in 0..<roots.count {
                let root = roots[tree]
                for row in 0..<rows { index[row] = root }
                for _ in 0..<depths[tree] {
                    for row in 0..<rows {
                        let node = base[Int(index[row])]
                        let value = x[row * width + Int(node.feature)]
                        // Branch-free: which child is data-dependent and unpredictable, so
                        // select it arithmetically rather than with a jump.
                        let isNaN = Self.bit(value != value)
                        let compared = Self.bit(Rule.branch(value, node.threshold))
                        let goesTrue = (compared & (1 &- isNaN)) | (isNaN & Self.bit(node.missingTracksTrue))
                        index[row] = node.falseChild &+ goesTrue &* (node.trueChild &- node.falseChild)
                    }
                }
                if dimensions == 1 {
                    for row in 0..<rows { out[row] += base[Int(index[row])].threshold }
                } else {
                    for row in 0..<rows {
                        let leaf = Int(index[row])
                        out[row * dimensions + Int(leafDimensions[leaf])] += base[leaf].threshold
                    }
                }
            }
        }
    }
}

extension StepwiseWalk {
    /// `1` for true, `0` for false, without a branch.
    @inline(__always)
    static func bit(_ flag: Bool) -> Int32 { Int32(unsafeBitCast(flag, to: UInt8.self)) }
}

/// A branch comparison, resolved at compile time in the stepwise loop.
protocol BranchRule {
    static func branch(_ value: Double, _ threshold: Double) -> Bool
}

enum LessOrEqual: BranchRule {
    @inline(__always) static func branch(_ value: Double, _ threshold: Double) -> Bool { value <= threshold }
}

enum Less: BranchRule {
    @inline(__always) static func branch(_ value: Double, _ threshold: Double) -> Bool { value < threshold }
}

enum GreaterOrEqual: BranchRule {
    @inline(__always) static func branch(_ value: Double, _ threshold: Double) -> Bool { value >= threshold }
}

enum Greater: BranchRule {
    @inline(__always) static func branch(_ value: Double, _ threshold: Double) -> Bool { value > threshold }
}
