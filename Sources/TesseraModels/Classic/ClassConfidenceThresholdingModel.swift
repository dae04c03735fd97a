import Foundation

/// `classConfidenceThresholding`: a `[C]` multi-array of class confidences in, a `[2, C]`
/// multi-array out whose row 0 is the confidences and row 1 each class's presence flag.
///
/// `ClassConfidenceThresholding.proto` defines the flags as 1 for every class ("currently,
/// the model simply takes all the classes"); its precision-recall curves are metadata for
/// Apple's Vision framework and do not change the values. The output takes the data type
/// its description declares (float64 when it declares none).
struct ClassConfidenceThresholdingModel: ClassicModel {
    let interface: ClassicInterface
    let input: MLFeatureDescription
    let output: MLFeatureDescription

    init(_ interface: ClassicInterface, file: String) throws {
        self.interface = interface
        input = try interface.singleInput(file: file)
        output = try interface.singleOutput(file: file)
        guard input.type == .multiArray, output.type == .multiArray else {
            throw interface.invalid(
                "input \"\(input.name)\" and output \"\(output.name)\" must be multi-arrays (they are a "
                    + "\(input.type) and a \(output.type))", file: file)
        }
    }

    func predict(_ row: any MLFeatureProvider) throws -> [String: MLFeatureValue] {
        guard let value = try interface.value(of: input, in: row), case .multiArray(let array) = value.storage else {
            throw interface.inputError("input \"\(input.name)\" must be a multi-array of class confidences")
        }
        let confidences = MLFeatureValue.doubles(of: array)
        let dataType = output.multiArrayConstraint?.dataType ?? .double
        return [
            output.name: .array(
                confidences + repeatElement(1, count: confidences.count), shape: [2, confidences.count],
                dataType: dataType)
        ]
    }
}
