import TesseraGraph
import TesseraKernels
import Testing

/// ``ViewRule``'s reshape: a view of the same buffer when strides can express it
/// (``StridedLayout/reshaped(to:)``), a copy otherwise.
@Suite("Views: reshape of strided views")
struct ViewReshapeTests {
    @Test("a head sliced out of a fused projection reshapes without a copy; a flattening that reorders copies")
    func slicedHead() {
        // [2, 3 · 3 · 4] read as [2, 3, 3, 4], permuted to [3, 2, 3, 4], the second of the three
        // taken: strides [12, 36, 4, 1] from offset 12.
        let product = Node(.unary(.exp), inputs: [constant(seededValues(72, seed: 64), [2, 36])])
        let split = Node(.permute([1, 0, 2, 3]), inputs: [Node(.reshape([2, 3, 3, 4]), inputs: [product])])
        let head = Node(.slice(starts: [1, 0, 0, 0], steps: [1, 1, 1, 1], counts: [1, 2, 3, 4]), inputs: [split])
        let dropped = Node(.reshape([2, 3, 4]), inputs: [head])
        let merged = Node(.reshape([2, 12]), inputs: [head])
        let flattened = Node(.reshape([24]), inputs: [head])
        planAndCheck([dropped, merged, flattened, product])
        let source = product.value!.storage
        #expect(dropped.value!.storage === source && dropped.value!.layout.strides == [36, 4, 1])
        #expect(merged.value!.storage === source && merged.value!.layout.strides == [36, 1])
        #expect(dropped.value!.layout.offset == 12 && merged.value!.layout.offset == 12)
        #expect(flattened.value!.storage !== source && flattened.value!.layout.isContiguous)
    }

    @Test("a fused step reads a strided reshape in row-major order")
    func fusedReaderOfStridedReshape() {
        let product = Node(.unary(.exp), inputs: [constant(seededValues(72, seed: 65), [2, 36])])
        let split = Node(.permute([1, 0, 2, 3]), inputs: [Node(.reshape([2, 3, 3, 4]), inputs: [product])])
        let head = Node(.slice(starts: [2, 0, 0, 0], steps: [1, 1, 1, 1], counts: [1, 2, 3, 4]), inputs: [split])
        let y = Node(
            .binary(.mul),
            inputs: [Node(.reshape([2, 12]), inputs: [head]), constant(seededValues(12, seed: 66), [12])])
        planAndCheck([y])
    }
}
