/// One MIL op type Tessera runs, with everything about it: its name, how it lowers, how a
/// batch goes through it and what it costs.
///
/// Every part is a required initializer argument, so an op without a batching rule or a cost
/// does not compile; ``MILOpRegistry`` holds every op and traps on a name registered twice.
/// Adding an op type means one registration in an area file under `Lowering/Ops/` plus its
/// tests:
///
/// ```swift
/// MILOp("relu", batch: .elementwise, cost: .elementwise) { lowering in
///     let x = try lowering.tensor("x")
///     return { args in [args[x].asFloat.relu()] }
/// }
/// ```
struct MILOp: Sendable {
    /// What lowering an op of this type does at load.
    enum Lowering: Sendable {
        /// The op becomes a step of the lowered function: the handler reads its constant
        /// parameters and registers its operands at load, and returns the closure that
        /// builds its results for each prediction; `batch` says how a batch goes through it.
        case step(OperationLowering.Handler, batch: MILOpBatching)
        /// The op is resolved entirely at load and leaves no step (constants, compressed
        /// weights, state writes): the resolver records what it defines in the context.
        /// `buildsTensors`: whether the resolver builds tensors, whose broken shape rules
        /// lowering turns into load errors naming the op (``OperationLowering/checkingShapes(_:)``).
        case atLoad(@Sendable (OperationLowering) throws -> Void, buildsTensors: Bool)
    }

    /// The MIL op type (`conv`, `reduce_sum`, …).
    let name: String
    /// What lowering does with an op of this type.
    let lowering: Lowering
    /// How ``MLComputePlan`` estimates the op's work.
    let cost: MILOpCost

    /// An op that runs per prediction.
    ///
    /// - Parameters:
    ///   - name: The MIL op type.
    ///   - batch: How a batch of predictions goes through it (``MILOpBatching/notSeparable``
    ///     when it mixes items; there is no default).
    ///   - cost: How its work is estimated.
    ///   - lower: Reads the op's parameters at load and returns its node builder.
    init(
        _ name: String, batch: MILOpBatching, cost: MILOpCost,
        lower: @escaping OperationLowering.Handler
    ) {
        self.name = name
        self.lowering = .step(lower, batch: batch)
        self.cost = cost
    }

    /// An op resolved at load that leaves no step.
    ///
    /// - Parameters:
    ///   - name: The MIL op type.
    ///   - cost: How its work is estimated (``MILOpCost/loadTime`` for constants).
    ///   - buildsTensors: Whether `resolve` builds tensors (then it runs where a broken
    ///     shape rule becomes a load error naming the op). A resolver that only records values
    ///     says `false` and skips that scope: `const`, a model's most frequent op by far.
    ///   - resolve: Records what the op defines (a constant, a state's new value) in the
    ///     lowering's context.
    init(
        atLoad name: String, cost: MILOpCost, buildsTensors: Bool = true,
        resolve: @escaping @Sendable (OperationLowering) throws -> Void
    ) {
        self.name = name
        self.lowering = .atLoad(resolve, buildsTensors: buildsTensors)
        self.cost = cost
    }
}

/// How an op treats a batch axis: decides the op's ``BatchRule`` at load from its constant
/// parameters.
struct MILOpBatching: Sendable {
    /// The rule for an op whose parameters `lowering` reads.
    let decide: @Sendable (OperationLowering) throws -> BatchRule

    /// A rule decided from the op's parameters.
    static func from(_ decide: @escaping @Sendable (OperationLowering) throws -> BatchRule) -> MILOpBatching {
        MILOpBatching(decide: decide)
    }

    /// The same rule for every op of the type.
    static func always(_ rule: BatchRule) -> MILOpBatching { MILOpBatching { _ in rule } }

    /// ``BatchRule/elementwise``.
    static let elementwise = always(.elementwise)
    /// ``BatchRule/leadingAxis``.
    static let leadingAxis = always(.leadingAxis)
    /// ``BatchRule/reshape``.
    static let reshape = always(.reshape)
    /// ``BatchRule/notSeparable``: a batch through the op runs as a loop.
    static let notSeparable = always(.notSeparable)

    /// A `reduce_*` op's rule from its `axes` and `keep_dims`.
    static let reduction = from { lowering in
        .reduction(axes: try lowering.ints("axes"), keepDims: try lowering.bool("keep_dims") ?? false)
    }

    /// The rule for the operation `lowering` has just lowered; a parameter that is not a
    /// readable constant gives ``BatchRule/notSeparable``.
    func rule(for lowering: OperationLowering) -> BatchRule {
        (try? decide(lowering)) ?? .notSeparable
    }
}

/// How ``OperationCostModel`` estimates an op's work (see ``OperationCostEstimate``).
enum MILOpCost: Sendable, Equatable {
    /// Done once at load (constants): no work per prediction.
    case loadTime
    /// One operation per result element (or per two input elements, whichever is more):
    /// arithmetic, comparisons, moves.
    case elementwise
    /// Four operations per result element: exponentials, roots, normalizations.
    case transcendental
    /// One operation per input element.
    case reduction
    /// Reads and writes each result element once (gathers, slices, reshapes).
    case dataMovement
    /// `2 · out · (C_in/groups · k…)`: a convolution's multiply-adds.
    case convolution
    /// `2 · in · (C_out/groups · k…)`: a transposed convolution's.
    case transposedConvolution
    /// `2 · out · D_in`.
    case linear
    /// `2 · out · inner`, the inner size read from `x` and `transpose_x`.
    case matmul
    /// `2 · out · inner`, the inner size the last axis of the first of `values` (`einsum`).
    case einsum
    /// Two products and a softmax per query and key.
    case attention
    /// A recurrent layer (`lstm`, `gru`, `rnn`): `2 · T · B · (|W_ih| + |W_hh|)` per
    /// direction, plus the gates.
    case recurrent
}
