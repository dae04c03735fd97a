import TesseraKernels

/// How an op's step runs: what the planner may do with it.
package enum OpKind: Sendable, Hashable {
    /// A node made with its value (``GraphOp/constant``); never a step.
    case leaf
    /// Applied element by element over the broadcast output shape; fuses into one
    /// ``FusedProgram`` with its element-wise neighbours.
    case elementwise
    /// A change of layout alone when the input allows it (``OpRule/view(_:of:)``).
    case view
    /// One kernel call over the whole output (``OpRule/run(_:_:)``).
    case kernel
}

/// Everything about one family of graph ops: its shape and type rule, its kind and how its
/// step calls its kernel. ``GraphOp/rule`` names the family of each op; there is one file per
/// family under `Ops/`.
///
/// The rule is the only copy of the op's checks: it throws an ``OpError`` whose message names
/// the op and the shapes, which ``Node/init(_:inputs:)`` turns into a trap (or, inside a
/// checking scope, a placeholder; see ``ShapeChecks``).
///
/// ```swift
/// let (shape, type) = try GraphOp.matmul.rule.infer(.matmul, [a, b])
/// ```
package protocol OpRule {
    /// What the planner may do with the family's steps.
    static var kind: OpKind { get }

    /// The result's shape and scalar type for `op` on `inputs`, or why they do not fit.
    static func infer(_ op: GraphOp, _ inputs: [Node]) throws(OpError) -> ([Int], KernelScalarType)

    /// Whether operand `index` of `op` must reach ``run(_:_:)`` row-major from its pointer
    /// (offset 0, no gaps), for kernels that take plain pointers and shapes. Default: none.
    static func needsRowMajor(_ op: GraphOp, operand index: Int) -> Bool

    /// Runs `op`'s kernel: reads `call`'s operands, writes its output. Only for
    /// ``OpKind/kernel`` families.
    static func run(_ op: GraphOp, _ call: KernelCall)

    /// Makes ahead of the first run, from the operands known before it (a loaded model's
    /// constants; `nil` for every operand computed at run time) and every operand's shape, the
    /// prepared forms ``run(_:_:)`` will look up for them (``PreparedWeights``: packed panels or
    /// a Winograd filter of a constant weight), so no prediction pays for them. Only for
    /// ``OpKind/kernel`` families; the default prepares nothing. It must look the forms up
    /// exactly as `run` does, so the two cannot drift apart.
    static func prepare(_ op: GraphOp, operands: [TensorValue?], shapes: [[Int]])

    /// About how much work ``prepare(_:operands:shapes:)`` does for these operands, in elements
    /// of the forms it writes, for spreading a load's preparations across the kernel workers.
    /// Default: the known operands' element counts (packing copies each element once).
    static func preparationCost(_ op: GraphOp, operands: [TensorValue?], shapes: [[Int]]) -> Int

    /// `source` with the layout `op` gives it, sharing its storage. Only for ``OpKind/view``
    /// families.
    static func view(_ op: GraphOp, of source: TensorValue) -> TensorValue
}

extension OpRule {
    package static func needsRowMajor(_ op: GraphOp, operand index: Int) -> Bool { false }

    package static func run(_ op: GraphOp, _ call: KernelCall) {
        kernelFailure("[execute] \(op) has no kernel")
    }

    package static func view(_ op: GraphOp, of source: TensorValue) -> TensorValue {
        kernelFailure("[view] \(op) is not a view")
    }

    package static func prepare(_ op: GraphOp, operands: [TensorValue?], shapes: [[Int]]) {}

    package static func preparationCost(_ op: GraphOp, operands: [TensorValue?], shapes: [[Int]]) -> Int {
        operands.reduce(0) { $0 + ($1?.layout.count ?? 0) }
    }

    /// Throws unless there are exactly `count` inputs.
    static func expectInputs(_ op: GraphOp, _ inputs: [Node], _ count: Int) throws(OpError) {
        try OpError.require(inputs.count == count, "[\(op)] takes \(count) inputs, got \(inputs.count)")
    }

    /// The number of elements of `shape` (sizes non-negative), or an error when the product
    /// does not fit in an `Int` (a shape from a damaged model file must not crash the build).
    static func elementCount(_ op: GraphOp, _ shape: [Int]) throws(OpError) -> Int {
        guard let count = shape.checkedElementCount else {
            throw OpError("[\(op)] shape \(shape) has more elements than an Int can count")
        }
        return count
    }

    /// Throws unless `axis` is in `0..<rank`.
    static func checkAxis(_ op: GraphOp, _ axis: Int, _ rank: Int) throws(OpError) {
        try OpError.require(axis >= 0 && axis < rank, "[\(op)] axis \(axis) out of range for rank \(rank)")
    }
}

/// The one calling convention between a kernel step and its kernel: every operand as a
/// pointer, a ``StridedLayout`` and a scalar type (a ``TensorValue``), and the output as a
/// row-major buffer of the node's shape and type.
///
/// Operands an op's rule asks for (``OpRule/needsRowMajor(_:operand:)``) arrive row-major
/// from their pointer, as does the residual; all of them stay alive while the kernel runs,
/// because the call holds them.
package struct KernelCall {
    /// The operands, in the node's input order.
    package let inputs: [TensorValue]
    /// Where the result goes: `shape.reduce(1, *)` elements of `type`, row-major.
    package let output: UnsafeMutableRawPointer
    /// The result's shape.
    package let shape: [Int]
    /// The result's scalar type.
    package let type: KernelScalarType
    /// For a convolution or `matmul` with a fused epilogue: a row-major tensor of the result's
    /// shape (for a `matmul`, also a bias of one value per column) added before the clamp; `nil`
    /// otherwise.
    package let residual: TensorValue?
    /// For a `matmul` whose fused epilogue also adds a result-shaped `residual`: a bias of one
    /// value per column, added first (`(a · b + columnBias) + residual`); `nil` otherwise.
    package let columnBias: TensorValue?
    /// For a convolution or `matmul` with a fused epilogue: the activation's bounds.
    package let clamp: ConvolutionClamp
    /// For a `matmul` with a fused epilogue: the activation applied after the clamp (see
    /// ``LinearActivationFusion``); `nil` otherwise.
    package let activation: LinearActivation?

    /// A call with the given operands and output.
    package init(
        inputs: [TensorValue], output: UnsafeMutableRawPointer, shape: [Int], type: KernelScalarType,
        residual: TensorValue? = nil, columnBias: TensorValue? = nil, clamp: ConvolutionClamp = .none,
        activation: LinearActivation? = nil
    ) {
        self.inputs = inputs
        self.output = output
        self.shape = shape
        self.type = type
        self.residual = residual
        self.columnBias = columnBias
        self.clamp = clamp
        self.activation = activation
    }

    /// The first operand.
    package var x: TensorValue { inputs[0] }

    /// The output as `Float`s.
    package var floatOutput: UnsafeMutablePointer<Float> { output.assumingMemoryBound(to: Float.self) }

    /// The output as `Int32`s.
    package var int32Output: UnsafeMutablePointer<Int32> { output.assumingMemoryBound(to: Int32.self) }
}

extension TensorValue {
    /// The first element of a row-major value as `Float`s (see ``OpRule/needsRowMajor(_:operand:)``).
    package var floats: UnsafePointer<Float> {
        (pointer + layout.offset * type.byteCount).assumingMemoryBound(to: Float.self)
    }

    /// The first element of a row-major value as `Int32`s (see ``OpRule/needsRowMajor(_:operand:)``).
    package var int32s: UnsafePointer<Int32> {
        (pointer + layout.offset * type.byteCount).assumingMemoryBound(to: Int32.self)
    }
}
