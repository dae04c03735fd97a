import TesseraKernels
import TesseraTensor

/// The load-time build check: a model that loads must not fail at prediction on the input
/// shapes its description declares.
///
/// Every shape rule of a lowered step depends on its operands' shapes only, except where a
/// step reads elements while building (a reshape target or slice bound computed at run time,
/// `non_zero`, the scatter indices). So building the graph once, at load, on inputs of the
/// declared shapes (filled with ones; nothing is computed except the small shape expressions
/// such reads need) finds every such failure, unless one of those reads takes values that
/// come from input data rather than from shapes. Then the shapes follow the data and the
/// check is left to the prediction.
extension LoweredFunction {
    /// Op types whose lowering reads an operand's elements while building, besides the
    /// run-time parameters ``LoweredStep/valueReads`` records: `cond` and `while_loop`
    /// materialize their predicates, the list ops their indices (and `make_list` its length
    /// and element sizes).
    static let elementReadingOperationTypes: Set<String> = [
        "non_zero", "scatter", "scatter_nd", "cond", "while_loop", "make_list", "list_read", "list_write",
        "list_gather", "list_scatter",
    ]

    /// Whether some step reads, while the graph is built, elements computed from input data
    /// (not only from input shapes), so that later shapes can depend on the input values.
    ///
    /// A value derives from data when it is an input or a state, or an op's result with an
    /// operand that does, except `shape`, whose result depends on its operand's shape only.
    package var shapesDependOnInputValues: Bool {
        var fromData = [Bool](repeating: false, count: slotCount)
        for slot in inputSlots { fromData[slot] = true }
        for step in steps {
            let reads =
                LoweredFunction.elementReadingOperationTypes.contains(step.type)
                ? Array(step.operands.indices) : step.valueReads
            if reads.contains(where: { fromData[step.operands[$0]] }) { return true }
            let derived = step.type != "shape" && step.operands.contains { fromData[$0] }
            for slot in step.results { fromData[slot] = derived }
        }
        return false
    }

    /// Builds the graph of one prediction on inputs of `shapes` whose elements are all 1,
    /// without computing it: the checks every prediction on these shapes makes, once. Returns
    /// the program's outputs, still pending: the graph a prediction on these shapes computes,
    /// for the model to prepare (``MLTensor/prepare(_:)``), or `nil` when the check was skipped.
    ///
    /// `shapes` maps input (and state) names to the shapes a caller gives them (a rank-0
    /// input as `[1]`, as Core ML gives it). Inputs missing from `shapes` or of a type Tessera
    /// does not compute in skip the check. Call it only when ``shapesDependOnInputValues``
    /// is `false`; otherwise a failure may belong to these particular values.
    ///
    /// The inputs are tensors of their own (as a prediction's are, so the graph has the
    /// prediction's structure and its plan is the one a prediction finds), up to
    /// ``maximumCheckInputBytes`` in all; past that, broadcast scalars.
    ///
    /// ```swift
    /// try function.checkBuilds(inputShapes: ["x": [1, 3, 224, 224]])
    /// ```
    ///
    /// - Throws: ``LoweringError`` as ``run(_:)`` does: `.shapeMismatch` naming the operation
    ///   whose operands do not fit it, `.invalidInput` when a shape is not the program's or
    ///   has more than ``maximumElementCount`` elements.
    @discardableResult
    package func checkBuilds(inputShapes shapes: [String: [Int]]) throws -> [String: MLTensor]? {
        var typed: [(name: String, shape: [Int], type: KernelScalarType)] = []
        for input in self.inputs {
            var type = input.type
            if case .state(let wrapped) = type { type = wrapped }
            guard let shape = shapes[input.name], let tensorType = type.tensorType,
                let computeType = LoweredFunction.computeType(tensorType.dataType)
            else { return nil }
            // The shapes come from the model's description: a damaged file can declare one
            // whose element count overflows, which a tensor of it would trap on.
            guard shape.allSatisfy({ $0 >= 0 }), let count = shape.checkedElementCount,
                count <= LoweredFunction.maximumElementCount
            else {
                throw LoweringError(
                    .invalidInput, file: file,
                    "input '\(input.name)' has shape \(shape), more than \(LoweredFunction.maximumElementCount) elements"
                )
            }
            typed.append((input.name, shape, computeType))
        }
        let bytes = typed.reduce(0) { $0 + $1.shape.reduce($1.type.byteCount) { $0 &* Swift.max($1, 0) } }
        let ownTensors = bytes <= LoweredFunction.maximumCheckInputBytes
        var inputs: [String: MLTensor] = [:]
        for (name, shape, type) in typed {
            // A broadcast scalar allocates nothing for the input itself.
            inputs[name] =
                ownTensors
                ? MLTensor(shape: shape, kernelType: type) { LoweredFunction.fillWithOnes($0, count: $1, type: type) }
                : MLTensor.scalarConstant(1, type: type).broadcast(to: shape)
        }
        return try run(inputs)
    }

    /// Writes `count` ones of `type` at `pointer`: one converted, then doubling copies.
    static func fillWithOnes(_ pointer: UnsafeMutableRawPointer, count: Int, type: KernelScalarType) {
        guard count > 0 else { return }
        withUnsafeBytes(of: 1.0) { one in
            ScalarConversion.convert(one.baseAddress!, from: .float64, into: pointer, to: type, count: 1)
        }
        var filled = 1
        while filled < count {
            let next = Swift.min(filled, count - filled)
            (pointer + filled * type.byteCount).copyMemory(from: pointer, byteCount: next * type.byteCount)
            filled += next
        }
    }

    /// The most bytes of inputs ``checkBuilds(inputShapes:)`` allocates (16 MiB).
    static let maximumCheckInputBytes = 16 << 20
}
