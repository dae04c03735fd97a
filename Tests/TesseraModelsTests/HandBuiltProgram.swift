import Foundation
import TesseraProtobuf

@testable import TesseraModels

/// A one-function ML program written op by op (with ``SpecBuilder``), for models coremltools
/// would not save: inputs with unknown dimensions feeding ops that only some sizes fit.
struct HandBuiltProgram {
    typealias B = SpecBuilder

    /// Float32 inputs by name, `nil` for an unknown dimension.
    var inputs: [(String, [Int?])]
    /// The operations, in order (constants included).
    var operations: [B.Body]
    /// The function's outputs.
    var outputs: [String]

    /// A float32 tensor type.
    static func float(_ dimensions: [Int?]) -> B.Body { B.tensorValueType(11, dimensions) }

    /// A `const` of int32 `values`, a scalar when `scalar`.
    static func ints(_ name: String, _ values: [Int], scalar: Bool = false) -> B.Body {
        B.operation(
            "const", name: name, outputs: [(name, B.tensorValueType(23, scalar ? [] : [values.count]))],
            attributes: [
                (
                    "val",
                    B.immediateTensor(type: B.tensorValueType(23, scalar ? [] : [values.count]), field: 2) {
                        $0.writePackedVarints(values.map { UInt64(bitPattern: Int64($0)) }, field: 1)
                    }
                )
            ])
    }

    /// A `const` of float32 `values` of `shape`.
    static func floats(_ name: String, shape: [Int], _ values: [Float]) -> B.Body {
        B.operation(
            "const", name: name, outputs: [(name, B.tensorValueType(11, shape))],
            attributes: [
                (
                    "val",
                    B.immediateTensor(type: B.tensorValueType(11, shape), field: 1) {
                        $0.writePackedFloats(values, field: 1)
                    }
                )
            ])
    }

    /// A scalar string `const` (`pad_type`, `mode`).
    static func string(_ name: String, _ value: String) -> B.Body {
        B.operation(
            "const", name: name, outputs: [(name, B.tensorValueType(2, []))],
            attributes: [("val", B.stringValue(value))])
    }

    /// An op whose inputs are bound by name and whose outputs are float32 of the given ranks
    /// (dimensions unknown).
    static func op(_ type: String, _ name: String, _ inputs: [(String, String)], outputRanks: [Int] = [2])
        -> B.Body
    {
        let outputs = outputRanks.enumerated().map { index, rank in
            (index == 0 ? name : "\(name)_\(index)", float([Int?](repeating: nil, count: rank)))
        }
        return B.operation(type, name: name, inputs: inputs.map { ($0.0, [$0.1]) }, outputs: outputs)
    }

    /// The model file's bytes, with a description of the given features when `describe`.
    func bytes(description: @escaping B.Body = { _ in }) -> [UInt8] {
        B.model(
            description: description,
            inputs: inputs.map { ($0.0, Self.float($0.1)) }, operations: operations, outputs: outputs)
    }

    /// Writes the model as `model.mlmodel` in a new temporary directory and returns its URL.
    func write(description: @escaping B.Body = { _ in }) throws -> URL {
        try Self.write(bytes(description: description))
    }

    /// Writes model bytes as `model.mlmodel` in a new temporary directory and returns its URL.
    static func write(_ bytes: [UInt8]) throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let url = directory.appendingPathComponent("model.mlmodel")
        try Data(bytes).write(to: url)
        return url
    }

    /// The program lowered.
    func lowered() throws -> LoweredFunction { try Self.lowered(bytes()) }

    /// A program's bytes lowered.
    static func lowered(_ bytes: [UInt8]) throws -> LoweredFunction {
        let url = try write(bytes)
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        return try LoweredFunction(package: try CoreMLPackage(contentsOf: url), functionName: "main")
    }
}
