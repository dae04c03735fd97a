extension MLModelStructure.Program {
    /// Converts a parsed ML program, numbering its operations and recording each one's
    /// relative cost in `numbering`. Functions are walked in name order, so numbering is
    /// deterministic.
    init(_ program: MILProgram, numbering: inout StructureNumbering) {
        var functions: [String: Function] = [:]
        for name in program.functions.keys.sorted() {
            let function = program.functions[name]!
            var costModel = OperationCostModel()
            costModel.define(function.inputs)
            var seconds: [(StructureKey, Double)] = []
            let body = (try? function.block()) ?? MILBlock(inputs: [], outputs: [], operations: [], attributes: [:])
            let block = Block(body, costModel: &costModel, seconds: &seconds, numbering: &numbering)
            let total = seconds.reduce(0) { $0 + $1.1 }
            for (key, value) in seconds {
                numbering.costWeights[key] = total > 0 ? value / total : 0
            }
            functions[name] = Function(
                inputs: function.inputs.map(MLModelStructure.Program.NamedValueType.init), block: block)
        }
        self.init(functions: functions)
    }
}

extension MLModelStructure.Program.Block {
    /// Converts a block, estimating each operation (nested blocks included) in order.
    init(
        _ block: MILBlock, costModel: inout OperationCostModel, seconds: inout [(StructureKey, Double)],
        numbering: inout StructureNumbering
    ) {
        costModel.define(block.inputs)
        var operations: [MLModelStructure.Program.Operation] = []
        operations.reserveCapacity(block.operations.count)
        for operation in block.operations {
            let key = numbering.next()
            let estimate = costModel.estimate(operation)
            seconds.append((key, estimate.seconds))
            if OperationCostModel.isLoadTimeConstant(operation.type) { numbering.constants.insert(key) }
            let blocks = operation.blocks.map {
                Self($0, costModel: &costModel, seconds: &seconds, numbering: &numbering)
            }
            var inputs: [String: MLModelStructure.Program.Argument] = [:]
            for (name, argument) in operation.inputs {
                inputs[name] = MLModelStructure.Program.Argument(
                    bindings: argument.bindings.map { binding in
                        switch binding {
                        case .name(let name): .name(name)
                        case .value(let value): .value(MLModelStructure.Program.Value(milValue: value))
                        }
                    })
            }
            operations.append(
                MLModelStructure.Program.Operation(
                    operatorName: operation.type, inputs: inputs,
                    outputs: operation.outputs.map(MLModelStructure.Program.NamedValueType.init), blocks: blocks,
                    key: key))
        }
        self.init(
            inputs: block.inputs.map(MLModelStructure.Program.NamedValueType.init), operations: operations,
            outputNames: block.outputs)
    }
}

extension MLModelStructure.Program.NamedValueType {
    /// Wraps a parsed named type.
    init(_ value: MILNamedValueType) {
        self.init(name: value.name, type: MLModelStructure.Program.ValueType(milType: value.type))
    }
}
