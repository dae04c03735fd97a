import TesseraTensor

extension LoweredFunction {
    /// The estimated work of each NeuralNetwork layer step, by layer name, from the shapes one
    /// prediction on zero inputs of the declared shapes would have (the graph is built, not
    /// run); `nil` when an input has no fixed shape or the build fails.
    ///
    /// Layers are estimated as ML program operations are (``OperationCostEstimate``): a
    /// convolution's `2 · out · (C_in/groups · kH · kW)` multiply-adds (read from its rank-4
    /// weight), an inner product's or matrix product's `2 · out · inner`, one to four
    /// operations per element for the rest, plus the bytes every operand and result takes.
    func neuralNetworkLayerCosts() -> [String: OperationCostEstimate]? {
        var zeros: [String: MLTensor] = [:]
        for (name, type) in inputs {
            guard let shape = type.tensorType?.shape else { return nil }
            zeros[name] = MLTensor(repeating: 0, shape: shape)
        }
        guard let values = try? evaluate(zeros) else { return nil }
        var costs: [String: OperationCostEstimate] = [:]
        for step in steps where !["input", "output", "classifier"].contains(step.type) {
            let operands = step.operands.compactMap { values[$0] }
            let results = step.results.compactMap { values[$0] }
            let outputs = Double(results.reduce(0) { $0 + $1.scalarCount })
            let inputs = Double(operands.reduce(0) { $0 + $1.scalarCount })
            let bytes = 4 * (outputs + inputs)
            let cost = NeuralNetworkLayerRegistry.types.values.first { $0.name == step.type }?.cost ?? .elementwise
            let flops: Double
            switch cost {
            case .loadTime: flops = 0
            case .convolution, .transposedConvolution:
                let weight = operands.dropFirst().first { $0.rank == 4 }?.shape ?? [1, 1]
                let taps = Double(weight.dropFirst().reduce(1, *))
                flops = 2 * (cost == .convolution ? outputs : Double(operands.first?.scalarCount ?? 0)) * taps
            case .linear, .matmul:
                flops = 2 * outputs * Double(operands.first?.shape.last ?? 1)
            case .reduction: flops = inputs
            case .dataMovement: flops = outputs
            case .transcendental: flops = 4 * Swift.max(outputs, inputs / 2)
            default: flops = Swift.max(outputs, inputs / 2)
            }
            costs[step.name] = OperationCostEstimate(flops: flops, bytes: bytes)
        }
        return costs
    }
}

extension StructureNumbering {
    /// Records the cost weights of a NeuralNetwork structure's layers (summing to 1), from the
    /// network lowered once more here; leaves them unset when the network does not lower or
    /// its inputs have no fixed shape.
    mutating func assignLayerCosts(
        _ structure: MLModelStructure.NeuralNetwork, of model: CoreMLSpec.Model, file: String
    ) {
        guard let network = model.neuralNetwork,
            let function = try? LoweredFunction(neuralNetwork: network, description: model.description, file: file),
            let costs = function.neuralNetworkLayerCosts()
        else { return }
        let seconds = structure.layers.map { costs[$0.name]?.seconds ?? 0 }
        let total = seconds.reduce(0, +)
        for (layer, value) in zip(structure.layers, seconds) { costWeights[layer.key] = total > 0 ? value / total : 0 }
    }
}
