import TesseraKernels

/// Lets a matrix product finish the fused program that applies a transformer's smooth
/// activation to it: `gelu(x · w + b)`, `silu(x · w + b)` (and the same without the bias).
///
/// A fusion root whose float32 program computes exactly one of ``LinearActivation``'s
/// expressions — as `MLTensor.gelu(approximation:)` and `MLTensor.silu()` build them, with
/// `add` and `mul` read either way round — of `t`, where `t` is a leaf or the sum of two
/// leaves, becomes one ``ExecutionPlan/Step/convEpilogue(entry:_:)`` step when one leaf of `t`
/// is a float32 `matmul` of the root's shape that no other program, kernel or the caller reads,
/// and the other (if any) is a float32 bias of one value per column or a tensor of the
/// product's shape. The product's kernel then adds the bias and applies the activation to each
/// block of rows as it writes it (``MatMulRule/run(_:_:)``), instead of a second pass over the
/// result. When `t` itself is needed elsewhere it is a fusion root of its own, so the
/// activation's program reads it as a leaf and nothing fuses. Writes `convEpilogues` and marks
/// the product `absorbed`.
///
/// The expressions' constants (`0.5`, `1`, `0.70710677`, …) are leaves whose values a plan does
/// not know (plans are shared by graphs whose constants differ): the step checks them at run
/// time and runs the product and then the program when one differs
/// (``ExecutionPlan/ConvolutionEpilogue/activationConstantsHold(_:)``).
enum LinearActivationFusion {
    /// One way to read a program as an activation of a product.
    struct Reading: Equatable {
        /// The leaf positions of the product and of the bias.
        var product: Int
        var bias: Int?
        var activation: LinearActivation
        /// The leaf positions of the expression's constants and the values they must hold.
        var constants: [Constant]
    }

    /// A leaf position and the value it must hold.
    struct Constant: Equatable {
        var leaf: Int
        var value: Float
    }

    static func run(_ state: inout PlanningState) {
        let entries = state.entries
        var programsReading = [Int](repeating: 0, count: entries.count)
        for group in state.groups.values { for leaf in group.leaves { programsReading[leaf] += 1 } }
        for (root, group) in state.groups
        where !state.absorbed.contains(root) && state.rowGroups[root] == nil && state.convEpilogues[root] == nil {
            for reading in readings(of: group.program) {
                let product = group.leaves[reading.product]
                let bias = reading.bias.map { group.leaves[$0] }
                let constants = reading.constants.map { group.leaves[$0.leaf] }
                guard case .matmul = entries[product].op, programsReading[product] == 1,
                    state.consumers[product].allSatisfy(state.fusible), !state.requested.contains(product),
                    entries[product].type == .float32, entries[root].type == .float32,
                    entries[product].shape == entries[root].shape
                else { continue }
                guard
                    constants.allSatisfy({
                        $0 != product && entries[$0].type == .float32 && entries[$0].shape.reduce(1, *) == 1
                    })
                else { continue }
                if let bias {
                    guard bias != product, entries[bias].type == .float32,
                        entries[bias].shape == entries[product].shape
                            || ConvolutionEpilogueFusion.isColumnBias(entries[bias].shape, of: entries[product].shape)
                    else { continue }
                }
                state.convEpilogues[root] = ExecutionPlan.ConvolutionEpilogue(
                    conv: product, residual: bias, lower: nil, upper: nil, activation: reading.activation,
                    activationConstants: zip(constants, reading.constants).map { ($0, $1.value) },
                    unfused: (group.program, group.leaves))
                state.absorbed.insert(product)
                break
            }
        }
    }

    /// An expression over one value `x`, single-element constants, and element-wise ops.
    indirect enum Pattern {
        case x
        case constant(Float)
        case unary(UnaryOp, Pattern)
        case binary(BinaryOp, Pattern, Pattern)

        static func * (a: Pattern, b: Pattern) -> Pattern { .binary(.mul, a, b) }
        static func + (a: Pattern, b: Pattern) -> Pattern { .binary(.add, a, b) }
    }

    /// The expression each activation is built as (`MLTensor+Activation.swift`).
    static func pattern(_ activation: LinearActivation) -> Pattern {
        switch activation {
        case .geluExact:
            return .x * .constant(0.5) * (.unary(.erf, .x * .constant(0.707_106_781_186_547_5)) + .constant(1))
        case .geluTanh:
            let inner = (.x + .x * .x * .x * .constant(0.044715)) * .constant(0.797_884_560_802_865_4)
            return .x * .constant(0.5) * (.unary(.tanh, inner) + .constant(1))
        case .silu:
            return .x * .unary(.sigmoid, .x)
        }
    }

    /// What a match binds: the register of `x` and the constants met.
    struct Bindings {
        var x: Int?
        var constants: [Constant] = []
    }

    /// Every way to read `program` as an activation of a leaf or of the sum of two leaves;
    /// `add` and `mul` match with their operands either way round.
    static func readings(of program: FusedProgram) -> [Reading] {
        guard program.computeType == .float32, program.outputs.count == 1 else { return [] }
        let instructions = program.instructions
        let leaf = program.inputIndex(loadedBy:)
        func ways(_ pattern: Pattern, _ r: Int, _ bound: Bindings) -> [Bindings] {
            switch pattern {
            case .x:
                if let x = bound.x { return x == r ? [bound] : [] }
                var next = bound
                next.x = r
                return [next]
            case .constant(let value):
                guard let k = leaf(r) else { return [] }
                var next = bound
                next.constants.append(Constant(leaf: k, value: value))
                return [next]
            case .unary(let op, let operand):
                guard case .unary(let o, let a) = instructions[r], o == op else { return [] }
                return ways(operand, a, bound)
            case .binary(let op, let left, let right):
                guard case .binary(let o, let a, let b) = instructions[r], o == op else { return [] }
                let orders = a == b ? [(a, b)] : [(a, b), (b, a)]
                return orders.flatMap { (l, r) in ways(left, l, bound).flatMap { ways(right, r, $0) } }
            }
        }
        var readings: [Reading] = []
        for activation in LinearActivation.allCases {
            for binding in ways(pattern(activation), program.outputs[0], Bindings()) {
                guard let x = binding.x else { continue }
                let constantLeaves = Set(binding.constants.map(\.leaf))
                var terms: [(product: Int, bias: Int?)] = []
                if let k = leaf(x) {
                    terms.append((k, nil))
                } else if case .binary(.add, let a, let b) = instructions[x], let ka = leaf(a), let kb = leaf(b),
                    ka != kb
                {
                    terms += [(ka, kb), (kb, ka)]
                }
                for term in terms where !constantLeaves.contains(term.product) {
                    if let bias = term.bias, constantLeaves.contains(bias) { continue }
                    let reading = Reading(
                        product: term.product, bias: term.bias, activation: activation, constants: binding.constants)
                    if !readings.contains(reading) { readings.append(reading) }
                }
            }
        }
        return readings
    }
}

extension ExecutionPlan.ConvolutionEpilogue {
    /// Whether every constant of the step's activation holds the value the activation's kernel
    /// assumes (always, without an activation).
    func activationConstantsHold(_ values: [TensorValue?]) -> Bool {
        activationConstants.allSatisfy { constant in
            guard let v = values[constant.entry] else { return false }
            let p = (v.pointer + v.layout.offset * v.type.byteCount).assumingMemoryBound(to: Float.self)
            return p.pointee == constant.value
        }
    }
}
