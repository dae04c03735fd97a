import Foundation

/// `scaler`: `y_i = (x_i + shift_i) · scale_i` on a number or a multi-array; a single shift
/// or scale applies to every element, an empty one is 0 (shift) or 1 (scale).
struct ScalerModel: ClassicModel {
    let interface: ClassicInterface
    let input: MLFeatureDescription
    let output: MLFeatureDescription
    let shift: [Double]
    let scale: [Double]

    init(_ spec: CoreMLSpec.Scaler, _ interface: ClassicInterface, file: String) throws {
        self.interface = interface
        input = try interface.singleInput(file: file)
        output = try interface.singleOutput(file: file)
        shift = spec.shift
        scale = spec.scale
        if !shift.isEmpty, !scale.isEmpty, shift.count != 1, scale.count != 1, shift.count != scale.count {
            throw interface.invalid(
                "shiftValue has \(shift.count) values but scaleValue has \(scale.count)", file: file)
        }
    }

    func predict(_ row: any MLFeatureProvider) throws -> [String: MLFeatureValue] {
        guard let value = try interface.value(of: input, in: row), let x = value.doubleElements else {
            throw interface.inputError(
                "input \"\(input.name)\" holds no numbers; the model expects \(input.expectation)")
        }
        for parameter in [shift, scale] where parameter.count > 1 && parameter.count != x.count {
            throw interface.inputError(
                "input \"\(input.name)\" has \(x.count) values, but the scaler has \(parameter.count)")
        }
        let y = x.indices.map { i in
            let s = shift.isEmpty ? 0 : shift[shift.count == 1 ? 0 : i]
            let c = scale.isEmpty ? 1 : scale[scale.count == 1 ? 0 : i]
            return (x[i] + s) * c
        }
        return [output.name: .numeric(y, as: output)]
    }
}
