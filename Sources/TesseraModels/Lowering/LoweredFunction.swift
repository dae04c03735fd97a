// PLACEHOLDER — replaced by the lowering branch at merge.
//
// This file exists so the MLModel API (Sources/TesseraModels/API) can run models before the
// MIL → graph lowering lands. It keeps exactly the interface the two branches agreed on and
// implements a tiny subset of MIL (const, linear, relu, add, mul, softmax, identity, and
// classify as a pass-through of its probabilities) by walking the program. Nothing else may
// live in this file and nothing outside it may use members beyond the agreed signature: the
// lead takes the lowering branch's version of this file at merge.

import Foundation
import TesseraTensor

/// One function of an ML program, ready to run as tensor-graph operations.
///
/// ```swift
/// let function = try LoweredFunction(package: package, functionName: "main")
/// let outputs = try function.run(["x": MLTensor(shape: [1, 8], scalars: values)])
/// ```
package struct LoweredFunction: Sendable {
    /// The function's inputs, in order, with their MIL types.
    package let inputs: [(name: String, type: MILValueType)]
    /// The values the function returns, in order.
    package let outputNames: [String]
    /// The labels of the function's `classify` op, if any (string labels only).
    package let classLabels: [String]?

    private let operations: [MILOperation]
    private let constants: [String: MLTensor]
    private let literals: [String: MILValue]

    /// Lowers `functionName` of the package's ML program.
    ///
    /// - Throws: an error naming the op and the model when the function uses an op this
    ///   placeholder does not run, or when the package is not an ML program.
    package init(package corePackage: CoreMLPackage, functionName: String) throws {
        let program = try corePackage.model.requireMLProgram(file: corePackage.modelDisplayName)
        let function = try program.function(named: functionName)
        let block = try function.block()
        let supported: Set<String> = ["const", "linear", "relu", "add", "mul", "softmax", "identity", "classify"]
        var constants: [String: MLTensor] = [:]
        var literals: [String: MILValue] = [:]
        var labels: [String]?
        for operation in block.operations {
            guard supported.contains(operation.type) else {
                throw ModelFormatError(
                    .unsupportedModelType, file: corePackage.modelDisplayName,
                    "operation \"\(operation.name ?? "?")\" is a \(operation.type), which Tessera does not run yet")
            }
            if operation.type == "const", let value = operation.attributes["val"], let output = operation.outputs.first
            {
                literals[output.name] = value
                if let tensor = try Self.tensor(value, package: corePackage) { constants[output.name] = tensor }
            }
            if operation.type == "classify", case .value(let value)? = operation.inputs["classes"]?.bindings.first,
                case .strings(let strings)? = CoreMLSpec.ClassLabels(value)
            {
                labels = strings
            }
        }
        self.inputs = function.inputs.map { (name: $0.name, type: $0.type) }
        self.outputNames = block.outputs
        self.classLabels = labels
        self.operations = block.operations
        self.constants = constants
        self.literals = literals
    }

    /// Builds the function's graph on `inputs` and returns its outputs (lazy tensors; the
    /// caller materializes them). A `classify` op returns its probabilities under its second
    /// output's name.
    package func run(_ inputs: [String: MLTensor]) throws -> [String: MLTensor] {
        var values = constants
        for (name, tensor) in inputs { values[name] = tensor }
        func argument(_ operation: MILOperation, _ name: String) throws -> MLTensor? {
            guard let binding = operation.inputs[name]?.bindings.first else { return nil }
            switch binding {
            case .name(let variable):
                guard let tensor = values[variable] else {
                    throw ModelFormatError(.invalidSpecification, "\(operation.type): no value for \"\(variable)\"")
                }
                return tensor
            case .value(let value): return try Self.tensor(value, package: nil)
            }
        }
        func required(_ operation: MILOperation, _ name: String) throws -> MLTensor {
            guard let tensor = try argument(operation, name) else {
                throw ModelFormatError(.invalidSpecification, "\(operation.type) has no argument \"\(name)\"")
            }
            return tensor
        }
        for operation in operations {
            let result: MLTensor
            switch operation.type {
            case "const": continue
            case "linear":
                let x = try required(operation, "x")
                var y = x.matmul(try required(operation, "weight").transposed())
                if let bias = try argument(operation, "bias") { y = y + bias }
                result = y
            case "relu": result = pointwiseMax(try required(operation, "x"), MLTensor(Float(0)))
            case "add": result = try required(operation, "x") + required(operation, "y")
            case "mul": result = try required(operation, "x") * required(operation, "y")
            case "identity": result = try required(operation, "x")
            case "softmax": result = try required(operation, "x").softmax(alongAxis: axis(operation))
            case "classify":
                if operation.outputs.count >= 2 {
                    values[operation.outputs[1].name] = try required(operation, "probabilities")
                }
                continue
            default:
                throw ModelFormatError(.unsupportedModelType, "\(operation.type) is not supported")
            }
            if let output = operation.outputs.first { values[output.name] = result }
        }
        var outputs: [String: MLTensor] = [:]
        for name in outputNames { outputs[name] = values[name] }
        return outputs
    }

    /// A softmax's axis: a literal or a const's value; −1 when absent.
    private func axis(_ operation: MILOperation) -> Int {
        guard let binding = operation.inputs["axis"]?.bindings.first else { return -1 }
        let value: MILValue? =
            switch binding {
            case .name(let name): literals[name]
            case .value(let value): value
            }
        if case .ints(let ints)? = value?.tensor, let first = ints.first { return Int(first) }
        return -1
    }

    /// A literal as a tensor (Float32 for floating-point data, Int32 for integers); `nil` for
    /// strings and other non-numeric literals.
    private static func tensor(_ value: MILValue, package corePackage: CoreMLPackage?) throws -> MLTensor? {
        guard let type = value.type?.tensorType, let shape = type.shape else { return nil }
        switch value.storage {
        case .blobFile(let reference):
            guard let corePackage else { return nil }
            let (file, blob) = try corePackage.blob(for: reference, type: type)
            return MLTensor(shape: shape, scalars: try file.floatValues(of: blob))
        case .immediate(.tensor(.floats(let floats))):
            return MLTensor(shape: shape, scalars: floats)
        case .immediate(.tensor(.ints(let ints))):
            return MLTensor(shape: shape, scalars: ints, scalarType: Int32.self)
        default:
            return nil
        }
    }
}
