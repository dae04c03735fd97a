import Foundation
import TesseraMultiArray
import TesseraTensor

/// One state of a stateful model, matched at load: the program's `state<tensor<…>>` input
/// and the description's `stateDescriptionsByName` entry, which must agree on the shape.
///
/// See the top of `MLState.swift` for how states reach the lowered program.
struct StateBinding: Sendable {
    /// The state's name: the function input's and the description's.
    let name: String
    /// The description (type `.state`, with an ``MLStateConstraint``).
    let description: MLFeatureDescription
    /// The buffer's shape: the declared one, or `[1]` for a rank-0 state (Core ML's shape for
    /// a scalar outside the program; the program reads and writes it as rank 0).
    let shape: [Int]
    /// The buffer's data type.
    let dataType: MLMultiArrayDataType

    /// One binding per state input of the function, in the function's order.
    ///
    /// - Throws: ``MLModelError`` `.io` when a state input has no description, or a
    ///   description no state input, or they disagree about the shape; `.generic` when the
    ///   state wraps something other than a fixed-shape tensor.
    static func make(function: LoweredFunction, description: MLModelDescription, model: String) throws
        -> [StateBinding]
    {
        try make(inputs: function.inputs, description: description, model: model)
    }

    /// One binding per state among `inputs` (a function's inputs), in order.
    static func make(
        inputs: [(name: String, type: MILValueType)], description: MLModelDescription, model: String
    ) throws -> [StateBinding] {
        var bindings: [StateBinding] = []
        for input in inputs {
            guard case .state(let wrapped) = input.type else { continue }
            guard let feature = description.stateDescriptionsByName[input.name],
                let constraint = feature.stateConstraint
            else {
                throw MLModelError(
                    .io, "cannot load \(model): the program's state \"\(input.name)\" is not in the model description")
            }
            guard let tensorType = wrapped.tensorType, let shape = tensorType.shape, shape.allSatisfy({ $0 > 0 }),
                let count = tensorType.elementCount, !count.multipliedReportingOverflow(by: 8).overflow
            else {
                throw MLModelError(
                    .generic,
                    "cannot load \(model): state \"\(input.name)\" is \(input.type); Tessera runs states that wrap "
                        + "a tensor of fixed shape")
            }
            let bufferShape = shape.isEmpty ? [1] : shape
            guard bufferShape == constraint.bufferShape else {
                throw MLModelError(
                    .io,
                    "cannot load \(model): state \"\(input.name)\" has shape \(shape) in the program but "
                        + "\(constraint.bufferShape) in the model description")
            }
            bindings.append(
                StateBinding(
                    name: input.name, description: feature, shape: bufferShape, dataType: constraint.dataType))
        }
        let bound = Set(bindings.map(\.name))
        if let missing = description.stateDescriptionsByName.keys.sorted().first(where: { !bound.contains($0) }) {
            throw MLModelError(
                .io, "cannot load \(model): the description's state \"\(missing)\" is not an input of the program")
        }
        return bindings
    }

    /// The scalar type the program computes the state in.
    var scalarType: any MLTensorScalar.Type {
        switch dataType {
        case .float16: Float16.self
        case .int32: Int32.self
        case .int8: Int8.self
        default: Float.self
        }
    }

    /// A copy of the buffer as a tensor of ``scalarType``.
    func tensor(copying buffer: MLMultiArray) -> MLTensor {
        switch dataType {
        case .float16: MLTensor(MLShapedArray<Float16>(converting: buffer))
        case .int32: MLTensor(MLShapedArray<Int32>(converting: buffer))
        case .int8: MLTensor(MLShapedArray<Int8>(converting: buffer))
        default: MLTensor(MLShapedArray<Float>(converting: buffer))
        }
    }
}
