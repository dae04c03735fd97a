import TesseraGraph
import Testing

@testable import TesseraTensor

/// ``BuildReads``: what makes a graph depend on values while it is built, counted on the
/// building thread (the check behind a model's prediction replay).
@Suite("BuildReads counts what a graph build reads")
struct BuildReadsTests {
    /// A materialized input of `count` elements (by default too many to fold at build time).
    static func input(_ count: Int = 100_000, value: Float = 2) -> MLTensor {
        MLTensor(shape: [count], scalars: [Float](repeating: value, count: count))
    }

    @Test("building on a watched input without reading it counts nothing")
    func lazyBuildCountsNothing() throws {
        let x = Self.input()
        let node = try #require(x.storedNode)
        let weight = Self.input(value: 3)
        let (_, reads) = BuildReads.counting(watching: [node]) { (x * weight + 1).exp() }
        #expect(reads == 0)
    }

    @Test("copying a watched input's elements counts; an unwatched constant's does not")
    func copiesCount() throws {
        let x = Self.input()
        let constant = Self.input(value: 5)
        let node = try #require(x.storedNode)
        #expect(BuildReads.counting(watching: [node]) { constant.scalars(of: Float.self) }.reads == 0)
        #expect(BuildReads.counting(watching: [node]) { x.scalars(of: Float.self) }.reads == 1)
        #expect(BuildReads.counting(watching: [node]) { x.shapedArray(of: Float.self) }.reads == 1)
    }

    @Test("computing anything while building counts")
    func materializationCounts() throws {
        let x = Self.input()
        let node = try #require(x.storedNode)
        let pending = x * 2
        #expect(BuildReads.counting(watching: [node]) { pending.materialized() }.reads >= 1)
        // Already computed: reading it again computes nothing, and it is not watched.
        #expect(BuildReads.counting(watching: [node]) { pending.scalars(of: Float.self) }.reads == 0)
    }

    @Test("folding on a watched scalar or small input counts")
    func foldingCounts() throws {
        // A rank-0 input of 1: `y * s` folds to `y` on its value.
        let s = MLTensor(
            value: TensorValue(
                storage: .allocate(count: 1, type: .float32),
                layout: .init(contiguous: []), type: .float32))
        s.storedNode!.value!.storage.pointer.assumingMemoryBound(to: Float.self).pointee = 1
        let y = Self.input()
        let scalarNode = try #require(s.storedNode)
        #expect(BuildReads.counting(watching: [scalarNode]) { y * s }.reads >= 1)
        // A small input (a leaf of 32 elements) folded with a constant at build time.
        let small = Self.input(32)
        let smallNode = try #require(small.storedNode)
        #expect(BuildReads.counting(watching: [smallNode]) { small + Self.input(32) }.reads >= 1)
    }

    @Test("no scope open: nothing is counted and nothing traps; scopes nest")
    func scopes() throws {
        let x = Self.input()
        _ = x.scalars(of: Float.self)
        BuildReads.note()
        let node = try #require(x.storedNode)
        let (inner, outer) = BuildReads.counting(watching: []) {
            BuildReads.counting(watching: [node]) { x.scalars(of: Float.self) }.reads
        }
        #expect(inner == 1 && outer == 0)
    }
}
