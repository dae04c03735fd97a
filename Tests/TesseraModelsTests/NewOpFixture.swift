import Foundation
import TesseraTensor
import Testing
import _TesseraTestSupport

@testable import TesseraModels

/// One case written by `tools/make_new_op_fixtures.py`: a MIL program using one of the ops
/// added as registrations, its inputs and the NumPy-computed outputs, in
/// `Tests/Fixtures/new-ops/<name>/`.
struct NewOpFixture: Decodable, Sendable, CustomTestStringConvertible {
    var name: String
    var inputs: [String]
    var outputs: [String]
    var rtol: Double
    var atol: Double
    /// The MIL op types in the saved program (without `const`).
    var ops: [String]

    var testDescription: String { name }

    /// Every case in `cases.json`.
    static let all: [NewOpFixture] = {
        do {
            let data = try Data(contentsOf: Fixtures.url("new-ops/cases.json"))
            return try JSONDecoder().decode([NewOpFixture].self, from: data)
        } catch {
            Issue.record("cannot read new-ops/cases.json: \(error)")
            return []
        }
    }()

    /// The cases a correct lowering passes whose name starts with `prefix` (not the
    /// `invalid_` ones).
    static func cases(_ prefix: String) -> [NewOpFixture] {
        all.filter { $0.name.hasPrefix(prefix) }
    }

    /// The case named `name`.
    static func named(_ name: String) -> NewOpFixture? { all.first { $0.name == name } }

    /// The case's program, lowered.
    func function() throws -> LoweredFunction {
        let package = try CoreMLPackage(contentsOf: Fixtures.url("new-ops/\(name)/model.mlpackage"))
        return try LoweredFunction(package: package, functionName: "main")
    }

    /// The case's inputs as tensors (int32 `.npy` files as Int32 tensors, the rest as Float).
    func inputTensors() throws -> [String: MLTensor] {
        var tensors: [String: MLTensor] = [:]
        for input in inputs {
            let array = try Fixtures.npy("new-ops/\(name)/\(input).npy")
            tensors[input] =
                array.dtype == "<i4"
                ? MLTensor(shape: array.shape, scalars: array.ints.map { Int32($0) }, scalarType: Int32.self)
                : MLTensor(shape: array.shape, scalars: array.floats, scalarType: Float.self)
        }
        return tensors
    }

    /// Lowers and runs the case and compares every output with NumPy's.
    func check() throws {
        let function = try function()
        let outputs = try function.run(try inputTensors())
        for (index, output) in self.outputs.enumerated() {
            let expected = try Fixtures.npy("new-ops/\(name)/expected_\(index).npy")
            let got = try #require(outputs[output], "no output \(output) among \(outputs.keys.sorted())")
            #expect(got.shape == expected.shape, "\(name) output \(output)")
            let mismatch = firstMismatch(got.scalars(of: Float.self), expected.floats, rtol: rtol, atol: atol)
            #expect(mismatch == nil, "\(name) output \(output): \(mismatch ?? "")")
        }
    }

    /// Lowers the case (which must load) and checks its prediction throws a shape mismatch
    /// naming `opType`.
    func expectShapeMismatch(naming opType: String) throws {
        let function = try function()
        let inputs = try inputTensors()
        #expect {
            try function.run(inputs)
        } throws: { error in
            guard let error = error as? LoweringError else { return false }
            return error.kind == .shapeMismatch && error.message.contains("'\(opType)'")
        }
    }
}
