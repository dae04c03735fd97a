import Foundation
import TesseraMultiArray
import TesseraTensor

/// How one input of the lowered function is fed: its description (checked here) and the
/// scalar type the program declares. The rank and fixed dimensions the program declares are
/// checked once, by the lowered function, when it binds its inputs (``runProgram(_:)`` turns
/// its error into ``MLModelError`` `.featureType`).
struct InputBinding: Sendable {
    let name: String
    let description: MLFeatureDescription
    let tensorType: MILTensorType

    /// One binding per function input, each matched to its description. State inputs are
    /// bound separately (``StateBinding``).
    static func make(function: LoweredFunction, description: MLModelDescription, model: String) throws
        -> [InputBinding]
    {
        try function.inputs.filter { if case .state = $0.type { false } else { true } }.map { input in
            guard let feature = description.inputDescriptionsByName[input.name] else {
                throw MLModelError(
                    .io, "cannot load \(model): the program's input \"\(input.name)\" is not in the model description")
            }
            guard let tensorType = input.type.tensorType,
                feature.type == .multiArray || (feature.type == .image && feature.imageConstraint != nil)
            else {
                throw MLModelError(
                    .generic,
                    "cannot load \(model): input \"\(input.name)\" is a \(feature.type) (\(input.type)); Tessera runs "
                        + "models whose inputs are multi-arrays or images")
            }
            return InputBinding(name: input.name, description: feature, tensorType: tensorType)
        }
    }

    /// The scalar type the program computes this input in.
    var scalarType: any MLTensorScalar.Type {
        switch tensorType.dataType {
        case .float16: Float16.self
        case .int32: Int32.self
        case .int8: Int8.self
        default: Float.self
        }
    }

    /// The input's value as a tensor, after every check.
    ///
    /// - Throws: ``MLModelError`` `.featureType` saying what is wrong with which input.
    func tensor(from provider: any MLFeatureProvider, inputs: [String]) throws -> MLTensor {
        guard let value = provider.featureValue(for: name), !value.isUndefined else {
            let optional = description.isOptional ? " (it is optional, but the program has no default for it)" : ""
            throw MLModelError(
                .featureType,
                "input \"\(name)\" is missing\(optional); the model expects \(description.expectation) "
                    + "(model inputs: \(inputs.joined(separator: ", ")))")
        }
        if let problem = description.problem(with: value) {
            throw MLModelError(.featureType, "input \"\(name)\" \(problem)")
        }
        if let buffer = value.imageBufferValue, let constraint = description.imageConstraint {
            return try ImagePreprocessing.tensor(
                from: buffer, layout: constraint.colorLayout, scalarType: scalarType, rank: tensorType.rank == 3 ? 3 : 4
            )
        }
        guard let array = value.multiArrayValue else {
            throw MLModelError(
                .featureType,
                "input \"\(name)\" is a \(value.type) value, but the model expects \(description.expectation)")
        }
        try checkNotEmpty(array.shapeValues)
        return convert(array)
    }

    /// A tensor input (the `[String: MLTensor]` prediction), after the same checks.
    func tensor(from tensors: [String: MLTensor], inputs: [String]) throws -> MLTensor {
        guard let tensor = tensors[name] else {
            throw MLModelError(
                .featureType,
                "input \"\(name)\" is missing; the model expects \(description.expectation) "
                    + "(model inputs: \(inputs.joined(separator: ", ")))")
        }
        if let constraint = description.multiArrayConstraint,
            let problem = MLFeatureDescription.shapeProblem(tensor.shape, constraint)
        {
            throw MLModelError(.featureType, "input \"\(name)\" \(problem)")
        }
        try checkNotEmpty(tensor.shape)
        return ObjectIdentifier(tensor.scalarType) == ObjectIdentifier(scalarType)
            ? tensor : tensor.cast(to: scalarType)
    }

    /// Checks that no dimension is empty (a Core ML input holds at least one element).
    private func checkNotEmpty(_ shape: [Int]) throws {
        if shape.contains(where: { $0 <= 0 }) {
            throw MLModelError(.featureType, "input \"\(name)\" has an empty dimension (shape \(shape))")
        }
    }

    /// The multi-array as a tensor of the program's scalar type: shared when the data types
    /// match, converted otherwise.
    private func convert(_ array: MLMultiArray) -> MLTensor {
        switch (tensorType.dataType, array.dataType) {
        case (.float32, .float32), (.float16, .float16), (.int32, .int32), (.int8, .int8): MLTensor(array)
        case (.float16, _): MLTensor(MLShapedArray<Float16>(converting: array))
        case (.int32, _): MLTensor(MLShapedArray<Int32>(converting: array))
        case (.int8, _): MLTensor(MLShapedArray<Int8>(converting: array))
        default: MLTensor(MLShapedArray<Float>(converting: array))
        }
    }
}

extension MLModel {
    /// Every input as a tensor, checked; nothing runs before all inputs pass.
    func boundInputs(_ provider: any MLFeatureProvider) throws -> [String: MLTensor] {
        var tensors: [String: MLTensor] = [:]
        for binding in bindings {
            tensors[binding.name] = try binding.tensor(from: provider, inputs: modelDescription.inputOrder)
        }
        return tensors
    }

    /// Runs the lowered program, wrapping whatever it throws in ``MLModelError``.
    ///
    /// A stateful model's `inputs` must hold every state under its name (see `MLState.swift`).
    func runProgram(_ inputs: [String: MLTensor]) throws -> [String: MLTensor] {
        if let state = stateBindings.first(where: { inputs[$0.name] == nil }) {
            throw MLModelError(
                .generic,
                "the model has state \"\(state.name)\"; predict with prediction(from:using:) and a state from "
                    + "makeState()")
        }
        do {
            // Values made on the host while the graph is built count against the memory limit.
            return try LoweredFunction.withPredictionMemoryLimit(configurationSnapshot.memoryLimit) {
                try function.run(inputs)
            }
        } catch let error as MLModelError {
            throw error
        } catch let error as LoweringError where error.kind != .shapeMismatch {
            // An input the program's declared type does not take.
            throw MLModelError(.featureType, error.message, underlyingError: error)
        } catch let error as ModelFormatError {
            throw MLModelError(.generic, "prediction failed: \(error.description)", underlyingError: error)
        } catch {
            throw MLModelError(.generic, "prediction failed: \(error)")
        }
    }
}
