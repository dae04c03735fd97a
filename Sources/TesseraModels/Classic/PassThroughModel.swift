import Foundation

/// `identity`: each output is the input at the same position, unchanged.
struct PassThroughModel: ClassicModel {
    let interface: ClassicInterface

    init(_ interface: ClassicInterface, file: String) throws {
        self.interface = interface
        guard interface.inputs.count >= interface.outputs.count else {
            throw interface.invalid(
                "the model has \(interface.outputs.count) outputs but only \(interface.inputs.count) inputs", file: file
            )
        }
    }

    func predict(_ row: any MLFeatureProvider) throws -> [String: MLFeatureValue] {
        var outputs: [String: MLFeatureValue] = [:]
        for (input, output) in zip(interface.inputs, interface.outputs) {
            outputs[output.name] = try interface.value(of: input, in: row) ?? MLFeatureValue(undefined: input.type)
        }
        return outputs
    }
}
