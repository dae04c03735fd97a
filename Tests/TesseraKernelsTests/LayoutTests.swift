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

    @Test("element range covers negative strides and offsets", arguments: LayoutKind.allCases)
    func elementRange(kind: LayoutKind) {
        let storage = kind.make(shape: [3, 4, 2]) { $0 }
        let positions = NaiveLayout.indices(of: [3, 4, 2]).map { NaiveLayout.position(of: $0, in: storage.layout) }
        #expect(storage.layout.elementRange == positions.min()!...positions.max()!)
    }
}
