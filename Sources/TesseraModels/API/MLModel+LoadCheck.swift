import TesseraTensor

extension MLModel {
    /// Checks at load that a prediction on the input shapes the description declares builds:
    /// each input's default shape (``MLMultiArrayConstraint/shape``) and each state's shape.
    ///
    /// Skipped when an input has no declared shape, or when the program's shapes depend on
    /// input values (``LoweredFunction/shapesDependOnInputValues``); other shapes a flexible
    /// description allows are checked by the prediction that uses them.
    ///
    /// - Returns: The outputs of that prediction's graph, not computed (for
    ///   ``prepareFirstPrediction(_:)``), or `nil` when the check was skipped.
    /// - Throws: ``MLModelError`` `.generic` naming the operation that would fail, e.g.
    ///   `cannot load m.mlpackage: on the shapes its description declares (x [2, 3]), a
    ///   prediction would fail: operation 'c' (op type 'concat'): …`.
    static func checkBuildsOnDeclaredShapes(
        _ function: LoweredFunction, inputs: [InputBinding], states: [StateBinding], model: String
    ) throws -> [String: MLTensor]? {
        var shapes: [String: [Int]] = [:]
        for binding in inputs {
            guard let shape = binding.description.multiArrayConstraint?.shapeValues, !shape.isEmpty else { return nil }
            shapes[binding.name] = shape
        }
        for state in states { shapes[state.name] = state.shape }
        guard !function.shapesDependOnInputValues else { return nil }
        do {
            return try function.checkBuilds(inputShapes: shapes)
        } catch let error as LoweringError {
            let declared = inputs.map { "\($0.name) \(shapes[$0.name]!)" }.joined(separator: ", ")
            throw MLModelError(
                .generic,
                "cannot load \(model): on the shapes its description declares (\(declared)), a prediction would "
                    + "fail: \(error.message)", underlyingError: error)
        }
    }

    /// Readies the first prediction at load, from the graph the load check built on the
    /// declared shapes (``checkBuildsOnDeclaredShapes(_:inputs:states:model:)``): the plan a
    /// prediction on those shapes runs is compiled and cached, and every convolution and
    /// product by a constant weight gets its weight's prepared form then
    /// (``MLTensor/prepare(_:)``), so the first prediction costs what a warm one does. Nothing
    /// is computed.
    func prepareFirstPrediction(_ outputs: [String: MLTensor]) {
        // The outputs in the order a prediction materializes them, so the plans match.
        let tensors = (try? pendingOutputs(outputs).tensors) ?? outputs.keys.sorted().map { outputs[$0]! }
        MLTensor.prepare(tensors)
    }
}
