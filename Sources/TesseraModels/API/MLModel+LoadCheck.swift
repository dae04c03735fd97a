import TesseraTensor

extension MLModel {
    /// Checks at load that a prediction on the input shapes the description declares builds:
    /// each input's default shape (``MLMultiArrayConstraint/shape``) and each state's shape.
    ///
    /// Skipped when an input has no declared shape, or when the program's shapes depend on
    /// input values (``LoweredFunction/shapesDependOnInputValues``); other shapes a flexible
    /// description allows are checked by the prediction that uses them.
    ///
    /// - Throws: ``MLModelError`` `.generic` naming the operation that would fail, e.g.
    ///   `cannot load m.mlpackage: on the shapes its description declares (x [2, 3]), a
    ///   prediction would fail: operation 'c' (op type 'concat'): …`.
    static func checkBuildsOnDeclaredShapes(
        _ function: LoweredFunction, inputs: [InputBinding], states: [StateBinding], model: String
    ) throws {
        var shapes: [String: [Int]] = [:]
        for binding in inputs {
            guard let shape = binding.description.multiArrayConstraint?.shapeValues, !shape.isEmpty else { return }
            shapes[binding.name] = shape
        }
        for state in states { shapes[state.name] = state.shape }
        guard !function.shapesDependOnInputValues else { return }
        do {
            try function.checkBuilds(inputShapes: shapes)
        } catch let error as LoweringError {
            let declared = inputs.map { "\($0.name) \(shapes[$0.name]!)" }.joined(separator: ", ")
            throw MLModelError(
                .generic,
                "cannot load \(model): on the shapes its description declares (\(declared)), a prediction would "
                    + "fail: \(error.message)", underlyingError: error)
        }
    }
}
