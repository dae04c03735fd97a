import Foundation
import Testing
import _TesseraTestSupport

@testable import TesseraModels

/// The tree walks (``CompleteTrees`` scalar and AVX-512, ``StepwiseWalk``, the general
/// walk) against a naive node-by-node walk of the spec's nodes, on random ensembles.
@Suite("Tree-ensemble walks match a naive walk")
struct TreeEnsembleWalkTests {
    /// A deterministic generator (SplitMix64), so that a failure reproduces.
    struct Generator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    static let width = 10

    /// A random ensemble: `trees` trees up to `depth` deep (some leaves early), features
    /// below ``width``, one behaviour for all branches (`nil`: a random one per branch);
    /// each tree's leaves add to dimension `tree % dimensions` (`perLeafDimensions`: a random
    /// dimension per leaf, with two values on some leaves).
    static func ensemble(
        trees: Int, depth: Int, behavior: Int32?, dimensions: Int, perLeafDimensions: Bool = false,
        earlyLeaves: Bool = true, width: Int = Self.width, seed: UInt64
    ) -> CoreMLSpec.TreeEnsemble {
        var random = Generator(state: seed)
        var spec = CoreMLSpec.TreeEnsemble()
        spec.dimensions = UInt64(dimensions)
        spec.basePrediction = (0..<dimensions).map { Double($0) * 0.25 }
        for tree in 0..<trees {
            var nextId: UInt64 = 0
            func grow(_ level: Int) -> UInt64 {
                let id = nextId
                nextId += 1
                var node = CoreMLSpec.TreeEnsemble.Node()
                node.treeId = UInt64(tree)
                node.nodeId = id
                if level == depth || (earlyLeaves && level > 0 && Int.random(in: 0..<5, using: &random) == 0) {
                    node.behavior = 6
                    let dimension =
                        perLeafDimensions ? Int.random(in: 0..<dimensions, using: &random) : tree % dimensions
                    node.values = [(UInt64(dimension), Double.random(in: -1...1, using: &random))]
                    if perLeafDimensions, dimensions > 1, Bool.random(using: &random) {
                        node.values.append((UInt64((dimension + 1) % dimensions), 0.5))
                    }
                } else {
                    node.behavior = behavior ?? Int32.random(in: 0...5, using: &random)
                    node.featureIndex = UInt64.random(in: 0..<UInt64(width), using: &random)
                    // Thresholds on a coarse grid, so that equal values (the `<` / `<=` edge) occur.
                    node.threshold = Double(Int.random(in: -4...4, using: &random)) / 4
                    node.missingTracksTrue = Bool.random(using: &random)
                    node.trueChild = grow(level + 1)
                    node.falseChild = grow(level + 1)
                }
                spec.nodes.append(node)
                return id
            }
            _ = grow(0)
        }
        return spec
    }

    /// Rows on the thresholds' grid and off it, with NaNs.
    static func rows(_ count: Int, width: Int = Self.width, seed: UInt64) -> [Double] {
        var random = Generator(state: seed)
        return (0..<count * width).map { _ in
            switch Int.random(in: 0..<10, using: &random) {
            case 0: .nan
            case 1...4: Double(Int.random(in: -5...5, using: &random)) / 4
            default: Double.random(in: -1.5...1.5, using: &random)
            }
        }
    }

    /// Node by node through the spec, with no flattening.
    static func naive(
        _ spec: CoreMLSpec.TreeEnsemble, _ x: [Double], rows: Int, dimensions: Int, width: Int = Self.width
    ) -> [Double] {
        var byId: [UInt64: [UInt64: CoreMLSpec.TreeEnsemble.Node]] = [:]
        for node in spec.nodes { byId[node.treeId, default: [:]][node.nodeId] = node }
        var out = [Double](repeating: 0, count: rows * dimensions)
        for row in 0..<rows {
            for d in 0..<dimensions { out[row * dimensions + d] = spec.basePrediction[d] }
            for tree in byId.keys.sorted() {
                var node = byId[tree]![0]!
                while node.behavior != 6 {
                    let value = x[row * width + Int(node.featureIndex)]
                    let t = node.threshold
                    let goes: Bool =
                        value.isNaN
                        ? node.missingTracksTrue
                        : [value <= t, value < t, value >= t, value > t, value == t, value != t][Int(node.behavior)]
                    node = byId[tree]![goes ? node.trueChild : node.falseChild]!
                }
                for (dimension, value) in node.values { out[row * dimensions + Int(dimension)] += value }
            }
        }
        return out
    }

    static func interface() throws -> ClassicInterface {
        let model = try MLModel(contentsOf: Fixtures.url("classic/sk_gradient_boosting_regressor.mlmodel"))
        return ClassicInterface(part: "treeEnsembleRegressor", description: model.modelDescription)
    }

    /// The forest's sums for `rows` rows, from the base prediction.
    static func evaluate(
        _ forest: TreeEnsembleForest, _ spec: CoreMLSpec.TreeEnsemble, _ x: [Double], rows: Int, width: Int = Self.width
    ) -> [Double] {
        let dimensions = Int(spec.dimensions)
        var out = (0..<rows * dimensions).map { spec.basePrediction[$0 % dimensions] }
        x.withUnsafeBufferPointer { x in
            out.withUnsafeMutableBufferPointer { out in
                forest.accumulate(
                    x.baseAddress!, rows: rows, width: width, dimensions: dimensions, into: out.baseAddress!)
            }
        }
        return out
    }

    @Test(
        "complete trees (vector and scalar walks) give the naive walk's sums, bit for bit",
        arguments: [(Int32(0), 1), (1, 1), (2, 1), (3, 1), (1, 3), (0, 4)])
    func completeTrees(behavior: Int32, dimensions: Int) throws {
        let spec = Self.ensemble(trees: 40, depth: 7, behavior: behavior, dimensions: dimensions, seed: 17)
        let forest = try TreeEnsembleForest(spec, dimensions: dimensions, Self.interface(), file: "test")
        #expect(forest.complete != nil)
        // 301 rows: blocks of 128 and a tail, and groups of 8 and a remainder in each.
        let rows = 301
        let x = Self.rows(rows, seed: 5)
        let got = Self.evaluate(forest, spec, x, rows: rows)
        let expected = Self.naive(spec, x, rows: rows, dimensions: dimensions)
        let wrong = (0..<got.count).filter { got[$0].bitPattern != expected[$0].bitPattern }
        #expect(wrong.isEmpty, "\(wrong.count) sums differ, first at \(wrong.first ?? 0)")
    }

    @Test(
        "depth 5 to 7 complete trees, narrow and wide rows: vector walk = scalar walk = naive walk, bit for bit",
        arguments: [(5, 10), (6, 10), (7, 10), (6, 45)])
    /// Levels 4 and 5 and 32 or 64 leaves are register lookups in the vector walk, level 6 a
    /// gather; 45 features are more than its on-stack feature-major block holds.
    func deeperCompleteTrees(depth: Int, width: Int) throws {
        for behavior in Int32(0)...3 {
            let spec = Self.ensemble(
                trees: 12, depth: depth, behavior: behavior, dimensions: 1, earlyLeaves: depth != 6, width: width,
                seed: UInt64(depth * 10) + UInt64(behavior))
            let forest = try TreeEnsembleForest(spec, dimensions: 1, Self.interface(), file: "test")
            let complete = try #require(forest.complete)
            if depth == 6 { #expect(complete.depths.allSatisfy { $0 == 6 }) }
            let rows = 128
            let x = Self.rows(rows, width: width, seed: UInt64(depth))
            let got = Self.evaluate(forest, spec, x, rows: rows, width: width)
            let expected = Self.naive(spec, x, rows: rows, dimensions: 1, width: width)
            var scalar = [Double](repeating: spec.basePrediction[0], count: rows)
            x.withUnsafeBufferPointer { x in
                scalar.withUnsafeMutableBufferPointer { out in
                    complete.scalar(x.baseAddress!, rows: rows, width: width, dimensions: 1, out: out.baseAddress!)
                }
            }
            let wrong = (0..<rows).filter { got[$0].bitPattern != expected[$0].bitPattern }
            let unlikeScalar = (0..<rows).filter { got[$0].bitPattern != scalar[$0].bitPattern }
            #expect(wrong.isEmpty, "behaviour \(behavior): \(wrong.count) sums differ from the naive walk's")
            #expect(unlikeScalar.isEmpty, "behaviour \(behavior): \(unlikeScalar.count) differ from the scalar walk's")
        }
    }

    @Test("shallow trees of depth 0 to 4 (the register-lookup levels) give the naive walk's sums")
    func shallowTrees() throws {
        for depth in 0...4 {
            let spec = Self.ensemble(trees: 9, depth: depth, behavior: 1, dimensions: 1, seed: UInt64(depth))
            let forest = try TreeEnsembleForest(spec, dimensions: 1, Self.interface(), file: "test")
            #expect(forest.complete != nil)
            let x = Self.rows(67, seed: 9)
            #expect(Self.evaluate(forest, spec, x, rows: 67) == Self.naive(spec, x, rows: 67, dimensions: 1))
        }
    }

    @Test("deep trees, mixed behaviours and multi-value leaves take the other walks and agree too")
    func otherWalks() throws {
        let cases: [(CoreMLSpec.TreeEnsemble, Int)] = [
            (Self.ensemble(trees: 6, depth: 14, behavior: 0, dimensions: 1, seed: 3), 1),  // too deep: stepwise
            (Self.ensemble(trees: 20, depth: 6, behavior: nil, dimensions: 2, seed: 4), 2),  // mixed: general walk
            (Self.ensemble(trees: 20, depth: 5, behavior: 1, dimensions: 3, perLeafDimensions: true, seed: 8), 3),
        ]
        for (spec, dimensions) in cases {
            let forest = try TreeEnsembleForest(spec, dimensions: dimensions, Self.interface(), file: "test")
            #expect(forest.complete == nil)
            let x = Self.rows(150, seed: 21)
            let got = Self.evaluate(forest, spec, x, rows: 150)
            let expected = Self.naive(spec, x, rows: 150, dimensions: dimensions)
            #expect(got.count == expected.count)
            #expect(zip(got, expected).allSatisfy { abs($0 - $1) <= 1e-12 })
        }
    }
}
