/// What a `classify` op carries: the labels and the names of its two outputs.
package struct LoweredClassifier: Sendable {
    /// The labels, in the order of the probabilities.
    package let labels: CoreMLSpec.ClassLabels
    /// The output that Core ML fills with the predicted label (`classLabel`); the lowered
    /// function returns the label's index there as a rank-0 Int32 tensor.
    package let labelOutput: String
    /// The output that Core ML fills with the label → probability dictionary
    /// (`classLabel_probs`); the lowered function returns the probabilities there as a
    /// 1-D Float32 tensor in label order.
    package let probabilitiesOutput: String

    /// The labels as strings.
    package var labelStrings: [String] {
        switch labels {
        case .strings(let strings): strings
        case .int64s(let integers): integers.map(String.init)
        }
    }

    init(_ operation: MILOperation, lowering: OperationLowering) throws {
        guard let binding = operation.inputs["classes"]?.bindings.first else {
            throw lowering.invalid("the required input 'classes' is missing")
        }
        let labels: CoreMLSpec.ClassLabels?
        switch binding {
        case .value(let value): labels = CoreMLSpec.ClassLabels(value)
        case .name(let name):
            switch lowering.context.constants[name]?.elements {
            case .strings(let strings): labels = .strings(strings)
            case .ints(let integers): labels = .int64s(integers.map(Int64.init))
            default: labels = nil
            }
        }
        guard let labels, operation.outputs.count == 2 else {
            throw lowering.invalid("expected a list of string or integer classes and two outputs")
        }
        self.labels = labels
        labelOutput = operation.outputs[0].name
        probabilitiesOutput = operation.outputs[1].name
    }
}
