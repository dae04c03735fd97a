import TesseraKernels
import Testing
import _TesseraTestSupport

@Suite("Layouts")
struct LayoutTests {
    @Test("contiguous strides are row-major")
    func contiguousStrides() {
        #expect(StridedLayout(contiguous: [2, 3, 4]).strides == [12, 4, 1])
        #expect(StridedLayout(contiguous: []).strides == [])
        #expect(StridedLayout(contiguous: [2, 3]).isContiguous)
        #expect(!StridedLayout(contiguous: [2, 3]).permuted([1, 0]).isContiguous)
    }

    @Test("broadcast gives stride 0 to new and size-1 dimensions")
    func broadcast() {
        let b = StridedLayout(contiguous: [3, 1]).broadcast(to: [2, 3, 4])
        #expect(b.strides == [0, 1, 0])
        #expect(StridedLayout.broadcastShape([1, 3, 1, 1], [8, 3, 224, 224]) == [8, 3, 224, 224])
        #expect(StridedLayout.broadcastShape([2, 3], [3, 2]) == nil)
        #expect(StridedLayout.broadcastShape([], [4]) == [4])
    }

    @Test("collapsing merges contiguous runs shared by every operand")
    func collapse() {
        let x = StridedLayout(contiguous: [8, 3, 224, 224])
        let mean = StridedLayout(contiguous: [1, 3, 1, 1]).broadcast(to: [8, 3, 224, 224])
        let c = CollapsedLayouts(shape: x.shape, strides: [x.strides, mean.strides])
        #expect(c.shape == [8, 3, 50176])
        #expect(c.strides == [[150528, 50176, 1], [0, 1, 0]])
        let s = CollapsedLayouts(shape: [1, 1], strides: [[5, 7]])
        #expect(s.shape == [1] && s.strides == [[0]])
    }

    /// Layouts of 24 elements: every kind, every permutation of a contiguous [2, 3, 4], a
    /// step-2 slice, a broadcast and a sliced q/k/v projection's first head group.
    static let reshapeSources: [StridedLayout] = {
        var sources = LayoutKind.allCases.map { $0.make(shape: [2, 3, 4]) { $0 }.layout }
        sources += LayoutKind.allCases.map { $0.make(shape: [1, 6, 1, 4]) { $0 }.layout }
        for permutation in [[0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]] {
            sources.append(StridedLayout(contiguous: [2, 3, 4]).permuted(permutation))
        }
        sources.append(StridedLayout(shape: [2, 3, 4], strides: [24, 8, 2], offset: 1))  // every other column
        sources.append(StridedLayout(contiguous: [3, 1]).broadcast(to: [2, 3, 4]))
        sources.append(StridedLayout(contiguous: [4]).broadcast(to: [6, 4]))
        // [1, 2, 3 · 3 · 4] read as [3, 1, 3, 2, 4] (perm of [1, 2, 3, 3, 4]), first slice of axis 0.
        sources.append(StridedLayout(shape: [1, 1, 3, 2, 4], strides: [12, 72, 4, 36, 1], offset: 0))
        return sources
    }()

    static let reshapeTargets: [[Int]] = [
        [24], [2, 12], [12, 2], [6, 4], [4, 6], [3, 8], [8, 3], [2, 3, 4], [3, 2, 4], [1, 2, 3, 4], [2, 3, 1, 4],
        [1, 24, 1], [6, 1, 4], [2, 1, 3, 1, 4, 1], [2, 2, 6], [2, 3, 2, 2], [1, 1, 3, 2, 4], [3, 2, 4, 1],
    ]

    @Test("reshaping without a copy reads every element where the row-major order puts it")
    func reshapeWithoutCopy() {
        var withoutCopy = 0
        for source in Self.reshapeSources {
            let order = NaiveLayout.indices(of: source.shape).map { NaiveLayout.position(of: $0, in: source) }
            for target in Self.reshapeTargets {
                guard let layout = source.reshaped(to: target) else {
                    #expect(!source.isContiguous, "\(source) to \(target)")
                    continue
                }
                if !source.isContiguous { withoutCopy += 1 }
                #expect(layout.shape == target)
                let positions = NaiveLayout.indices(of: target).map { NaiveLayout.position(of: $0, in: layout) }
                #expect(positions == order, "\(source) to \(target): \(layout)")
            }
        }
        #expect(withoutCopy > 40)
    }

    @Test("a reshape that would reorder elements or change the count has no layout")
    func reshapeNeedsCopy() {
        let transposed = StridedLayout(contiguous: [2, 3]).permuted([1, 0])
        #expect(transposed.reshaped(to: [6]) == nil)
        #expect(transposed.reshaped(to: [3, 2])?.strides == [1, 3])
        #expect(transposed.reshaped(to: [1, 3, 1, 2]).map { [$0.strides[1], $0.strides[3]] } == [1, 3])
        #expect(StridedLayout(contiguous: [2, 3]).reshaped(to: [7]) == nil)
        #expect(StridedLayout(contiguous: [2, 0]).reshaped(to: [0, 5])?.shape == [0, 5])
        let query = StridedLayout(shape: [1, 1, 6, 1500, 64], strides: [384, 1_728_000, 64, 1152, 1], offset: 384)
        let heads = query.reshaped(to: [1, 6, 1500, 64])
        #expect(heads?.strides.suffix(3) == [64, 1152, 1])
        #expect(heads?.offset == 384)
    }

    @Test("element range covers negative strides and offsets", arguments: LayoutKind.allCases)
    func elementRange(kind: LayoutKind) {
        let storage = kind.make(shape: [3, 4, 2]) { $0 }
        let positions = NaiveLayout.indices(of: [3, 4, 2]).map { NaiveLayout.position(of: $0, in: storage.layout) }
        #expect(storage.layout.elementRange == positions.min()!...positions.max()!)
    }
}
