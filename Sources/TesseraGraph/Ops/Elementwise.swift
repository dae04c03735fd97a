import TesseraKernels

/// ``GraphOp/unary(_:)``, ``GraphOp/binary(_:)``, ``GraphOp/select`` and
/// ``GraphOp/cast(_:)``: element by element over the broadcast shape (NumPy rules). They run
/// as fused programs the planner builds, never as a kernel step of their own.
package enum ElementwiseRule: OpRule {
    package static var kind: OpKind { .elementwise }

    package static func infer(_ op: GraphOp, _ inputs: [Node]) throws(OpError) -> ([Int], KernelScalarType) {
        switch op {
        case .unary(let unary):
            try expectInputs(op, inputs, 1)
            let type = inputs[0].type
            try OpError.require(
                type.isFloatingPoint || (type.isInteger && unary.isDefinedForIntegers),
                "[\(unary)] is not defined for \(type) tensors (shape \(inputs[0].shape))")
            return (inputs[0].shape, type)
        case .binary(let binary):
            try expectInputs(op, inputs, 2)
            let (a, b) = (inputs[0], inputs[1])
            try OpError.require(
                a.type == b.type, "[\(binary)] scalar types differ: \(a.type) \(a.shape) vs \(b.type) \(b.shape)")
            // Equal shapes and scalar operands (the common cases) need no new shape array.
            let broadcast: [Int]? =
                a.shape == b.shape || b.shape.isEmpty
                ? a.shape : (a.shape.isEmpty ? b.shape : StridedLayout.broadcastShape(a.shape, b.shape))
            guard let shape = broadcast else {
                throw OpError("[\(binary)] shapes \(a.shape) and \(b.shape) are not broadcastable")
            }
            try OpError.require(
                a.type != .bool || binary.isDefinedForBool,
                "[\(binary)] is not defined for bool tensors (shape \(a.shape))")
            return (shape, binary.producesBool ? .bool : a.type)
        case .select:
            try expectInputs(op, inputs, 3)
            try OpError.require(inputs[0].type == .bool, "[select] the mask must be bool, got \(inputs[0].type)")
            try OpError.require(
                inputs[1].type == inputs[2].type,
                "[select] scalar types differ: \(inputs[1].type) vs \(inputs[2].type)")
            guard let ab = StridedLayout.broadcastShape(inputs[1].shape, inputs[2].shape),
                let shape = StridedLayout.broadcastShape(inputs[0].shape, ab)
            else {
                throw OpError(
                    "[select] shapes \(inputs[0].shape), \(inputs[1].shape) and \(inputs[2].shape) are not broadcastable"
                )
            }
            return (shape, inputs[1].type)
        case .cast(let type):
            try expectInputs(op, inputs, 1)
            return (inputs[0].shape, type)
        default:
            throw OpError("[\(op)] is not an element-wise op")
        }
    }
}
