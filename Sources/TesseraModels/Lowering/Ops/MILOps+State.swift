/// States (iOS 18): `read_state` yields a state's current value; `write_state` (resolved at
/// load, it has no result) and `coreml_update_state` rebind it, and the function returns each
/// written state's final value under the state's name.
extension MILOp {
    static let stateOps: [MILOp] = [
        MILOp("read_state", batch: .notSeparable, cost: .elementwise) { lowering in
            guard case .name(let state)? = lowering.operation.inputs["input"]?.bindings.first,
                let slot = lowering.context.stateSlots[state]
            else { throw lowering.invalid("'input' must name a state of the function") }
            let current = lowering.appendOperand(slot: slot)
            return { args in [args[current]] }
        },
        MILOp("coreml_update_state", batch: .notSeparable, cost: .elementwise) { lowering in
            guard case .name(let state)? = lowering.operation.inputs["state"]?.bindings.first,
                lowering.context.stateSlots[state] != nil
            else { throw lowering.invalid("'state' must name a state of the function") }
            let value = try lowering.tensor("value")
            lowering.updatedState = state
            return { args in [args[value]] }
        },
        MILOp(atLoad: "write_state", cost: .elementwise) { lowering in
            let context = lowering.context
            guard case .name(let state)? = lowering.operation.inputs["input"]?.bindings.first,
                context.stateSlots[state] != nil, let data = lowering.operation.inputs["data"]?.bindings.first
            else { throw lowering.invalid("write_state does not name a state and a value") }
            let slot: Int?
            switch data {
            case .name(let value): slot = try context.slot(for: value)
            case .value(let value):
                slot = try context.literalSlot(
                    context.constant(value, what: "data of '\(lowering.displayName)'"))
            }
            guard let slot else { throw lowering.invalid("write_state writes an undefined value") }
            context.writeState(state, slot: slot)
        },
    ]
}
