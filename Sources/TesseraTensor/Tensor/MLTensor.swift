import TesseraGraph
import TesseraKernels

/// A multi-dimensional array of numerical or Boolean scalars tailored to ML use cases,
/// containing methods to perform transformations and mathematical operations efficiently.
///
/// An `MLTensor` is a lazy value: building an expression records a graph and returns at once;
/// nothing is computed until you read the result with `await tensor.shapedArray(of:)` (or, as
/// a Tessera extension, the synchronous overload or ``materialized()``). At that point the
/// whole pending expression runs as one plan: chains of element-wise operations and
/// broadcasts are fused into single passes over memory, matrix products and convolutions run
/// on OpenBLAS, and the plan is cached for the next tensor of the same structure and shapes.
///
/// Tensors are immutable values (`x += y` rebinds `x`), `Sendable`, and safe to share across
/// tasks. Operations never throw: a programmer error such as mismatched shapes traps with a
/// message that names the operation and the shapes, e.g.
/// `[matmul] inner dimensions differ: [2, 3] vs [4, 5]`.
///
/// ```swift
/// let x = MLTensor(shape: [2, 3], scalars: [1, 2, 3, 4, 5, 6], scalarType: Float.self)
/// let y = (x - x.mean(alongAxes: 1, keepRank: true)).softmax()
/// let values = await y.shapedArray(of: Float.self)
/// ```
public struct MLTensor: Sendable {
    /// The graph node this tensor names, or `nil` when the tensor holds its elements itself
    /// (``inline``). A `var` only so that ``binaryReusingStorage(_:_:)`` can check that it
    /// holds the only reference.
    package var storedNode: Node?
    /// For a rank-0 tensor written as a literal (`x * 2`, `x + 0.5`), the literal's value: such
    /// a tensor takes the scalar type of the tensor it meets, as the scalar overloads do.
    package let literal: Double?
    // (The literal comes before the inline elements: a 9-byte field at the end would be
    // copied with an unaligned 16-byte move overlapping the shape's, which stalls loads.)

    /// The elements of a small `Float` tensor that has no node (``storedNode`` is `nil`);
    /// ``InlineFloats/none`` otherwise.
    package let inline: InlineFloats

    /// A tensor naming an existing graph node.
    package init(node: Node, literal: Double? = nil) {
        storedNode = node
        inline = .none
        self.literal = literal
    }

    /// A tensor holding small `Float` elements itself (see ``InlineFloats``).
    package init(inline: InlineFloats, literal: Double? = nil) {
        storedNode = nil
        self.inline = inline
        self.literal = literal
    }

    /// A tensor for `op` applied to the given tensors.
    package init(_ op: GraphOp, _ inputs: [MLTensor]) {
        self.init(node: Node(op, inputs: inputs.map(\.node)))
    }

    /// A tensor for a binary `op` (one array fewer than the general form, for the hot path).
    package init(_ op: GraphOp, _ a: MLTensor, _ b: MLTensor) {
        self.init(node: Node(op, inputs: [a.node, b.node]))
    }

    /// A tensor holding `value`.
    package init(value: TensorValue) {
        self.init(node: Node(value: value))
    }

    /// The graph node for this tensor: its own, or for a tensor with inline elements a
    /// materialized leaf holding them (made on each call; see ``InlineFloats/leafNode()``).
    package var node: Node { storedNode ?? inline.leafNode() }

    /// The shape: `[2, 3]` for a 2×3 matrix, `[]` for a scalar.
    public var shape: [Int] { storedNode?.shape ?? inline.shape }

    /// The number of dimensions.
    public var rank: Int { storedNode?.shape.count ?? inline.rank }

    /// The number of elements (the product of the shape; 1 for a scalar).
    public var scalarCount: Int { storedNode?.count ?? inline.count }

    /// The element type, e.g. `Float.self`; `Int32.self` for `argmax` results.
    public var scalarType: any MLTensorScalar.Type { kernelType.tensorScalarType }

    /// Whether the tensor has rank 0.
    public var isScalar: Bool { rank == 0 }

    /// The kernel-layer tag of the element type.
    package var kernelType: KernelScalarType { storedNode?.type ?? .float32 }

    /// `axis` counted from the front (`-1` is the last axis).
    ///
    /// Traps when `axis` is outside `-rank..<rank` (or `-(rank + 1)...rank` with
    /// `insertion`), naming `op`; inside ``withShapeChecks(_:)`` it records that and returns
    /// `nil` (the caller returns a placeholder).
    package func normalizedAxis(_ axis: Int, op: String, insertion: Bool = false) -> Int? {
        let bound = insertion ? rank + 1 : rank
        guard
            MLTensor.check(
                axis >= -bound && axis < bound, "[\(op)] axis \(axis) is out of range for a tensor of shape \(shape)")
        else { return nil }
        return axis < 0 ? axis + bound : axis
    }
}
