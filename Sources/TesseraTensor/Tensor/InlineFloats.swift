import TesseraGraph
import TesseraKernels

/// The elements of a small `Float` tensor held inside the ``MLTensor`` value itself, with no
/// graph node and no heap memory of their own.
///
/// Build-time folding (see `MLTensor+SmallFolding.swift`) computes a small element-wise op at
/// once; when the result has at most ``capacity`` elements (one 64-byte cache line) and rank
/// at most ``maxRank``, it is stored here instead of in a node, so a chain such as
/// `x = x * a + b` on a 16-element `x` allocates nothing per op. `Float` literals (`x * 1.5`) and `Float` scalar operands are
/// stored the same way, so they need no shared-constant lookup either.
///
/// A tensor with inline elements is materialized by definition. When one is used where a
/// graph node is needed (as an input of an op that does not fold, or to read its value), a
/// leaf node holding a copy of the elements is made on the spot (``leafNode()``); a rank-0
/// value comes from the shared constant cache, so `big * 2` in a loop still names one
/// constant node.
///
/// ```swift
/// var x = MLTensor([1, 2, 3, 4] as [Float])
/// x = x * 1.5 + 0.25   // both results are inline: no node, no allocation
/// ```
package struct InlineFloats: Sendable {
    /// The most elements a tensor holds inline: 16 `Float`s, one cache line.
    package static let capacity = 16
    /// The highest rank an inline shape can have.
    package static let maxRank = 8

    /// The placeholder a tensor backed by a node carries (no elements).
    package static let none = InlineFloats(elements: .zero, header: .zero)

    /// The elements in row-major order; lanes from `count` on are unused.
    package var elements: SIMD16<Float>
    /// The shape in 16 bytes: the dimensions in lanes 0..<rank (every dimension of an inline
    /// tensor is between 1 and 16, so a byte holds it) and zero up to lane 7, the rank in
    /// lane 8, the element count in lane 9, zero in the rest. The value has no references to
    /// count and no odd-sized fields: copying one is five 16-byte moves.
    private let header: SIMD16<UInt8>

    /// The number of dimensions.
    package var rank: Int { Int(header[8]) }
    /// The number of elements in use (the product of the dimensions), 1 through ``capacity``.
    package var count: Int { Int(header[9]) }

    private init(elements: SIMD16<Float>, header: SIMD16<UInt8>) {
        self.elements = elements
        self.header = header
    }

    /// Elements of `shape` (`count` of them, row-major in `elements`), or `nil` when the shape
    /// does not fit: no elements, more than ``capacity``, or rank above ``maxRank``.
    package init?(shape: [Int], count: Int, elements: SIMD16<Float>) {
        guard InlineFloats.fits(shape: shape, count: count) else { return nil }
        var header = SIMD16<UInt8>.zero
        for (axis, dimension) in shape.enumerated() { header[axis] = UInt8(truncatingIfNeeded: dimension) }
        header[8] = UInt8(shape.count)
        header[9] = UInt8(count)
        self.init(elements: elements, header: header)
    }

    /// Whether `count` elements of `shape` can be held inline: 1 through ``capacity`` of them,
    /// rank at most ``maxRank``.
    package static func fits(shape: [Int], count: Int) -> Bool {
        count > 0 && count <= capacity && shape.count <= maxRank
    }

    /// `elements` in the shape of `other`.
    package init(elements: SIMD16<Float>, shapedLike other: InlineFloats) {
        self.init(elements: elements, header: other.header)
    }

    /// A rank-0 value.
    package init(scalar: Float) {
        var header = SIMD16<UInt8>.zero
        header[9] = 1
        self.init(elements: SIMD16(repeating: scalar), header: header)
    }

    /// The shape as an array (made on each call).
    package var shape: [Int] {
        rank == 0 ? [] : (0..<rank).map { Int(header[$0]) }
    }

    /// Whether `other` has the same shape.
    package func hasSameShape(as other: InlineFloats) -> Bool {
        header == other.header
    }

    /// Calls `body` with the address of the first element (valid only inside `body`).
    package func withElements<Result>(_ body: (UnsafePointer<Float>) -> Result) -> Result {
        withUnsafeBytes(of: elements) { body($0.baseAddress!.assumingMemoryBound(to: Float.self)) }
    }

    /// A materialized leaf node holding a copy of the elements. A rank-0 value that is not a
    /// NaN comes from the shared constant cache (one node per distinct constant); every other
    /// value gets a new leaf.
    package func leafNode() -> Node {
        if rank == 0 && !elements[0].isNaN {
            // `Double(Float)` is exact, and converting it back rounds to the same `Float`.
            return MLTensor.scalarConstant(Double(elements[0]), type: .float32).node
        }
        let storage = TensorStorage.allocate(count: count, type: .float32)
        withElements {
            storage.pointer.copyMemory(from: UnsafeRawPointer($0), byteCount: count * MemoryLayout<Float>.stride)
        }
        return Node(value: TensorValue(storage: storage, layout: StridedLayout(contiguous: shape), type: .float32))
    }
}
