import Foundation
import TesseraTensor
import Testing
import _TesseraTestSupport

@testable import TesseraModels

/// One case written by `tools/make_lowering_fixtures.py` (in `Tests/Fixtures/lowering/<name>/`)
/// or `tools/make_new_op_fixtures.py` (in `Tests/Fixtures/new-ops/<name>/`): a MIL program, its
/// inputs and the NumPy-computed outputs.
struct LoweringFixture: Decodable, Sendable, CustomTestStringConvertible {
    var name: String
    var inputs: [String]
    var outputs: [String]
    var rtol: Double
    var atol: Double
    /// The MIL op types in the saved program (without `const`).
    var ops: [String]
    /// The class labels, for the classifier case.
    var labels: [String]?
    /// The fixture folder the case lives in (`lowering` or `new-ops`); not in `cases.json`.
    var folder = "lowering"

    private enum CodingKeys: String, CodingKey { case name, inputs, outputs, rtol, atol, ops, labels }

    var testDescription: String { name }

    /// Every case in `lowering/cases.json`.
    static let all = load("lowering")

    /// Every case in `<folder>/cases.json`.
    static func load(_ folder: String) -> [LoweringFixture] {
        do {
            let data = try Data(contentsOf: Fixtures.url("\(folder)/cases.json"))
            return try JSONDecoder().decode([LoweringFixture].self, from: data).map { fixture in
                var fixture = fixture
                fixture.folder = folder
                return fixture
            }
        } catch {
            Issue.record("cannot read \(folder)/cases.json: \(error)")
            return []
        }
    }

    /// The cases a supported model should pass.
    static let supported = all.filter { !$0.name.hasPrefix("unsupported_") && !$0.name.hasPrefix("invalid_") }

    /// The case named `name`.
    static func named(_ name: String) -> LoweringFixture? { all.first { $0.name == name } }

    /// The case's package.
    func package() throws -> CoreMLPackage {
        try CoreMLPackage(contentsOf: Fixtures.url("\(folder)/\(name)/model.mlpackage"))
    }

    /// The case's inputs as tensors (int32 `.npy` files as Int32 tensors, the rest as Float).
    func inputTensors() throws -> [String: MLTensor] {
        var tensors: [String: MLTensor] = [:]
        for input in inputs {
            let array = try Fixtures.npy("\(folder)/\(name)/\(input).npy")
            tensors[input] =
                try array.dtype == "<i4"
                ? MLTensor(shape: array.shape, scalars: array.ints.map { Int32($0) }, scalarType: Int32.self)
                : MLTensor(shape: array.shape, scalars: array.floats, scalarType: Float.self)
        }
        return tensors
    }

    /// The expected value of output `index`.
    func expected(_ index: Int) throws -> NumPyArray {
        try Fixtures.npy("\(folder)/\(name)/expected_\(index).npy")
    }
}
